//! The CUDA kernels compile with NVRTC, which needs no GPU. This test needs
//! NVRTC, so the README's `cargo test` lists it as ignored; CI installs NVRTC
//! (scripts/fetch-nvrtc.sh) and runs it with `--ignored`, where a missing
//! library fails it.

// The GPU backend is built on Linux only (build.rs's `gpu_backend`);
// elsewhere these tests are not compiled.
#![cfg(gpu_backend)]

use treehash::Algorithm;
use treehash::gpu::kernels;
use treehash::sponge::{Rounds, SpongeSpec};

/// Leaf states must stay in registers: a local-memory array in the PTX
/// means an index the compiler could not resolve.
fn assert_no_local_memory(ptx: &str, what: &str) {
    assert!(
        !ptx.contains(".local"),
        "{what}: the kernels use local memory"
    );
}

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
        assert_no_local_memory(&ptx, &algorithm.to_string());
    }
}

/// The chunk kernel (kernels/chunks.cu) of every chunk sponge the GPU runs,
/// and of others a `SpongeSpec` can state (every FIPS 202 rate, either round
/// count, outputs that are not whole words, the lowest and highest domain
/// bytes), compiles without local memory.
#[test]
#[ignore = "needs NVRTC: run scripts/fetch-nvrtc.sh, put .nvrtc/nvidia/cu13/lib on \
            LD_LIBRARY_PATH, then cargo test --test kernels_compile -- --ignored (.ci/run does)"]
fn chunk_kernel_compiles_for_every_sponge_spec_without_local_memory() {
    assert!(
        kernels::nvrtc_present(),
        "libnvrtc.so not found (scripts/fetch-nvrtc.sh installs it)"
    );
    let mut specs = kernels::CHUNK_SPECS.to_vec();
    // KT128's chunks (RFC 9861) and ParallelHash256's blocks (SP 800-185).
    let kt128 = SpongeSpec::new(Rounds::Turbo12, 168, 0x0B, 32);
    let parallel_hash256 = SpongeSpec::new(Rounds::Keccak24, 136, 0x1F, 64);
    assert!(specs.contains(&kt128) && specs.contains(&parallel_hash256));
    for algorithm in Algorithm::ALL {
        specs.push(SpongeSpec::new(Rounds::Keccak24, algorithm.rate(), 0x06, 5));
    }
    specs.push(SpongeSpec::new(Rounds::Turbo12, 168, 0x01, 168));
    specs.push(SpongeSpec::new(Rounds::Turbo12, 136, 0x7F, 1));
    for spec in specs {
        let ptx = kernels::compile_chunks("sm_90", &spec)
            .unwrap_or_else(|e| panic!("{e}"))
            .to_src();
        let entry = kernels::CHUNK_ENTRY_POINT;
        assert!(
            ptx.contains(&format!(".entry {entry}(")),
            "{spec:?}: kernel {entry} missing from the PTX"
        );
        assert_no_local_memory(&ptx, &format!("{spec:?}"));
    }
}
