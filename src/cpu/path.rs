//! The CPU code paths a caller may ask for by name.

use std::fmt;
use std::str::FromStr;

/// Which CPU code path hashes the leaves. Every path gives the same digests;
/// they differ in speed and in what the CPU must have.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CpuPath {
    /// The fastest path this CPU has: AVX-512 or AVX2 on x86-64, the
    /// ARMv8.2 SHA3 instructions (two leaves per permutation) on aarch64,
    /// else the portable one.
    #[default]
    Auto,
    /// One scalar sponge per leaf (no SIMD): any CPU.
    Portable,
    /// Four leaves per permutation; needs AVX2 (x86-64).
    Avx2,
    /// Eight leaves per permutation; needs AVX-512F (x86-64).
    Avx512,
}

impl CpuPath {
    /// Every path, `Auto` first.
    pub const ALL: [CpuPath; 4] = [
        CpuPath::Auto,
        CpuPath::Portable,
        CpuPath::Avx2,
        CpuPath::Avx512,
    ];

    /// The lower-case name: `auto`, `portable`, `avx2`, `avx512`.
    pub const fn name(self) -> &'static str {
        match self {
            CpuPath::Auto => "auto",
            CpuPath::Portable => "portable",
            CpuPath::Avx2 => "avx2",
            CpuPath::Avx512 => "avx512",
        }
    }
}

impl fmt::Display for CpuPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for CpuPath {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        CpuPath::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                format!("unknown CPU path '{s}' (expected auto, portable, avx2 or avx512)")
            })
    }
}
