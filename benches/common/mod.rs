//! What the CPU benchmarks share (`cpu.rs`, `permutations.rs`; each a crate
//! of its own, so this file is a module of both).

use treehash::CpuPath;

/// The kernels measured, each as its name in the tables and the path that
/// runs it, `None` where this CPU lacks it: the paths a caller names, then
/// on aarch64 the two-lane SHA3 kernel.
pub(crate) fn kernels() -> Vec<(&'static str, Option<CpuPath>)> {
    [CpuPath::Portable, CpuPath::Avx2, CpuPath::Avx512]
        .map(|path| (path.name(), Some(path)))
        .into_iter()
        .chain(sha3_kernel())
        .collect()
}

/// The SHA3 kernel's entry, on aarch64 only. No `CpuPath` names that
/// kernel: `Auto` runs it where the CPU has SHA3 (the library detects it
/// the same way) and is the portable kernel elsewhere, so a CPU without
/// SHA3 gets no path for it.
fn sha3_kernel() -> Option<(&'static str, Option<CpuPath>)> {
    #[cfg(all(target_arch = "aarch64", target_endian = "little"))]
    {
        let sha3 = std::arch::is_aarch64_feature_detected!("sha3");
        Some(("sha3 (auto)", sha3.then_some(CpuPath::Auto)))
    }
    #[cfg(not(all(target_arch = "aarch64", target_endian = "little")))]
    {
        None
    }
}
