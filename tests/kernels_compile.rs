//! The CUDA kernels compile with NVRTC, which needs no GPU. This test needs
//! NVRTC, so the README's `cargo test` lists it as ignored; CI installs NVRTC
//! (scripts/fetch-nvrtc.sh) and runs it with `--ignored`, where a missing
//! library fails it.

use treehash::Algorithm;
use treehash::gpu::kernels;

#[test]
#[ignore = "needs NVRTC: run scripts/fetch-nvrtc.sh, put .nvrtc/nvidia/cu13/lib on \
            LD_LIBRARY_PATH, then cargo test --test kernels_compile -- --ignored (.ci/run does)"]
fn kernel_source_compiles_for_hopper_without_local_memory() {
    assert!(
        kernels::nvrtc_present(),
        "libnvrtc.so not found (scripts/fetch-nvrtc.sh installs it)"
    );
    for algorithm in Algorithm::ALL {
        let ptx = kernels::compile("sm_90", algorithm)
            .unwrap_or_else(|e| panic!("{e}"))
            .to_src();
        for name in kernels::ENTRY_POINTS {
            assert!(
                ptx.contains(&format!(".entry {name}(")),
                "{algorithm}: kernel {name} missing from the PTX"
            );
        }
        // Leaf states must stay in registers: a local-memory array in the PTX
        // means an index the compiler could not resolve.
        assert!(
            !ptx.contains(".local"),
            "{algorithm}: the kernels use local memory"
        );
    }
}
