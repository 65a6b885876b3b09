//! The CUDA kernels compile with NVRTC, which needs no GPU. CI installs NVRTC
//! (scripts/fetch-nvrtc.sh) and puts it on LD_LIBRARY_PATH; without it this
//! test says it was skipped.

use treehash::gpu::kernels;

#[test]
fn kernel_source_compiles_for_hopper_without_local_memory() {
    if !kernels::nvrtc_present() {
        eprintln!(
            "SKIPPED kernel_source_compiles: libnvrtc.so not found \
             (run scripts/fetch-nvrtc.sh and add .nvrtc/nvidia/cu13/lib to LD_LIBRARY_PATH)"
        );
        return;
    }
    let ptx = kernels::compile("sm_90", kernels::Selection::All)
        .expect("the kernels compile")
        .to_src();
    for name in kernels::entry_points() {
        assert!(
            ptx.contains(&format!(".entry {name}(")),
            "kernel {name} missing from the PTX"
        );
    }
    // Leaf states must stay in registers: a local-memory array in the PTX
    // means an index the compiler could not resolve.
    assert!(!ptx.contains(".local"), "the kernels use local memory");
}
