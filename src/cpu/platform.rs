//! What this CPU can run, detected once, as values (after BLAKE3's
//! `platform.rs`). A SIMD feature is a zero-sized token that only detection
//! can build; every SIMD function takes its token as a parameter, so an
//! `unsafe` call into `#[target_feature]` code rests on the token's
//! existence, not on a caller remembering to check.
//!
//! [`Platform::kernel`] is the one place that picks the leaf kernel for a set
//! of parameters. A kernel is code that runs the permutation: here the
//! portable sponges, or a lane kernel of 4, 8 or 2 states per permutation.

use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

use crate::error::HashError;
use crate::params::TreeParams;
#[cfg(any(
    target_arch = "x86_64",
    all(target_arch = "aarch64", target_endian = "little")
))]
use crate::sponge::{Rounds, SpongeSpec};

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

/// Proof that this CPU has AVX2: only [`Avx2::detect`] makes one.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx2(());

/// Proof that this CPU has AVX-512F: only [`Avx512::detect`] makes one.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx512(());

/// Proof that this CPU has the ARMv8.2 SHA3 instructions (EOR3, RAX1,
/// XAR, BCAX): only [`Sha3::detect`] makes one.
#[cfg(all(target_arch = "aarch64", target_endian = "little"))]
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sha3(());

/// The features found, once per process (none are looked for on other
/// architectures).
#[derive(Clone, Copy, Debug)]
#[cfg_attr(
    not(any(
        target_arch = "x86_64",
        all(target_arch = "aarch64", target_endian = "little")
    )),
    allow(dead_code)
)]
struct Detected {
    #[cfg(target_arch = "x86_64")]
    avx2: Option<Avx2>,
    #[cfg(target_arch = "x86_64")]
    avx512: Option<Avx512>,
    #[cfg(all(target_arch = "aarch64", target_endian = "little"))]
    sha3: Option<Sha3>,
}

#[cfg_attr(
    not(any(
        target_arch = "x86_64",
        all(target_arch = "aarch64", target_endian = "little")
    )),
    allow(dead_code)
)]
fn detected() -> Detected {
    static DETECTED: OnceLock<Detected> = OnceLock::new();
    *DETECTED.get_or_init(|| Detected {
        #[cfg(target_arch = "x86_64")]
        avx2: std::arch::is_x86_feature_detected!("avx2").then_some(Avx2(())),
        #[cfg(target_arch = "x86_64")]
        avx512: std::arch::is_x86_feature_detected!("avx512f").then_some(Avx512(())),
        #[cfg(all(target_arch = "aarch64", target_endian = "little"))]
        sha3: std::arch::is_aarch64_feature_detected!("sha3").then_some(Sha3(())),
    })
}

#[cfg(all(target_arch = "aarch64", target_endian = "little"))]
impl Sha3 {
    /// The token, if this CPU has the SHA3 instructions (Neoverse V1 and
    /// V2, Grace, Apple M1 on; not Graviton2's Neoverse N1 nor Altra).
    pub(crate) fn detect() -> Option<Sha3> {
        detected().sha3
    }
}

#[cfg(target_arch = "x86_64")]
impl Avx2 {
    /// The token, if this CPU has AVX2.
    pub(crate) fn detect() -> Option<Avx2> {
        detected().avx2
    }
}

#[cfg(target_arch = "x86_64")]
impl Avx512 {
    /// The token, if this CPU has AVX-512F.
    pub(crate) fn detect() -> Option<Avx512> {
        detected().avx512
    }
}

/// The CPU code path a backend uses, with the proof that the CPU can run it.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Platform {
    /// One scalar sponge per leaf.
    Portable,
    /// Four leaves per permutation in 256-bit registers.
    #[cfg(target_arch = "x86_64")]
    Avx2(Avx2),
    /// Eight leaves per permutation in 512-bit registers.
    #[cfg(target_arch = "x86_64")]
    Avx512(Avx512),
    /// Two leaves per permutation in 128-bit registers, with the ARMv8.2
    /// SHA3 instructions. No [`CpuPath`] names it: `Auto` takes it where
    /// the CPU has SHA3, and `Portable` stands for the other path.
    #[cfg(all(target_arch = "aarch64", target_endian = "little"))]
    Sha3(Sha3),
}

impl Platform {
    /// The platform for `path`: `Auto` is the best this CPU has; a path the
    /// CPU lacks is an error that names the missing feature.
    pub(crate) fn new(path: CpuPath) -> Result<Platform, HashError> {
        let missing = |feature| HashError::CpuFeature {
            path: path.name(),
            feature,
        };
        match path {
            CpuPath::Portable => Ok(Platform::Portable),
            CpuPath::Auto => Ok(Self::best()),
            #[cfg(target_arch = "x86_64")]
            CpuPath::Avx2 => Avx2::detect().map(Platform::Avx2).ok_or(missing("AVX2")),
            #[cfg(target_arch = "x86_64")]
            CpuPath::Avx512 => Avx512::detect()
                .map(Platform::Avx512)
                .ok_or(missing("AVX-512F")),
            #[cfg(not(target_arch = "x86_64"))]
            CpuPath::Avx2 => Err(missing("AVX2 (an x86-64 CPU)")),
            #[cfg(not(target_arch = "x86_64"))]
            CpuPath::Avx512 => Err(missing("AVX-512F (an x86-64 CPU)")),
        }
    }

    /// The fastest path this CPU can run.
    fn best() -> Platform {
        #[cfg(target_arch = "x86_64")]
        {
            if let Some(avx512) = Avx512::detect() {
                return Platform::Avx512(avx512);
            }
            if let Some(avx2) = Avx2::detect() {
                return Platform::Avx2(avx2);
            }
        }
        #[cfg(all(target_arch = "aarch64", target_endian = "little"))]
        if let Some(sha3) = Sha3::detect() {
            return Platform::Sha3(sha3);
        }
        Platform::Portable
    }

    /// The leaf kernel for `params` on this platform. The lane kernels need a
    /// tree (H ≥ 1, leaves of c-byte outputs) with at least one group of
    /// leaves, and B a multiple of the rate, so that every block starts at
    /// position 0 of the sponge; everything else takes the portable sponges.
    pub(crate) fn kernel(self, params: &TreeParams) -> Kernel {
        #[cfg_attr(
            not(any(
                target_arch = "x86_64",
                all(target_arch = "aarch64", target_endian = "little")
            )),
            allow(unused_variables)
        )]
        let lanes_fit = |width: u64| {
            params.height() > 0
                && params.leaf_count() >= width
                && params
                    .block_size()
                    .is_multiple_of(params.algorithm().rate())
        };
        match self {
            #[cfg(target_arch = "x86_64")]
            Platform::Avx512(avx512) if lanes_fit(8) => Kernel::Lanes8(avx512),
            #[cfg(target_arch = "x86_64")]
            Platform::Avx2(avx2) if lanes_fit(4) => Kernel::Lanes4(avx2),
            #[cfg(all(target_arch = "aarch64", target_endian = "little"))]
            Platform::Sha3(sha3) if lanes_fit(2) => Kernel::Lanes2(sha3),
            _ => Kernel::Sponges,
        }
    }

    /// The kernel for parent nodes: lanes wherever the CPU has them, as
    /// every node of a level hashes the same number of bytes.
    pub(crate) fn node_kernel(self) -> Kernel {
        match self {
            #[cfg(target_arch = "x86_64")]
            Platform::Avx512(avx512) => Kernel::Lanes8(avx512),
            #[cfg(target_arch = "x86_64")]
            Platform::Avx2(avx2) => Kernel::Lanes4(avx2),
            #[cfg(all(target_arch = "aarch64", target_endian = "little"))]
            Platform::Sha3(sha3) => Kernel::Lanes2(sha3),
            Platform::Portable => Kernel::Sponges,
        }
    }
}

/// The permutation of one state alone, for what one sponge hashes by
/// itself: the standard functions' final nodes, TurboSHAKE's whole message,
/// the chunks and leaf blocks the lane kernels leave over
/// (`keccak::OneState::permute`).
#[derive(Clone, Copy, Debug)]
pub(crate) enum OneState {
    /// Plain 64-bit code with lane complementing (`keccak::p1600_scalar`):
    /// any CPU.
    Portable,
    /// The state in five AVX-512 registers (`keccak_x1`).
    #[cfg(target_arch = "x86_64")]
    Avx512(Avx512),
}

impl OneState {
    /// The fastest this CPU has, from the features detected once: what
    /// the `Auto` path runs.
    pub(crate) fn best() -> OneState {
        Platform::best().one_state()
    }
}

impl Platform {
    /// The one-state permutation of this platform: AVX-512's where the
    /// path is AVX-512, the portable code on every other path, so that a
    /// forced path runs only its own instructions
    /// (docs/decisions/0029-one-state-keccak-avx512.md).
    pub(crate) fn one_state(self) -> OneState {
        match self {
            #[cfg(target_arch = "x86_64")]
            Platform::Avx512(avx512) => OneState::Avx512(avx512),
            #[cfg(target_arch = "x86_64")]
            Platform::Avx2(_) => OneState::Portable,
            #[cfg(all(target_arch = "aarch64", target_endian = "little"))]
            Platform::Sha3(_) => OneState::Portable,
            Platform::Portable => OneState::Portable,
        }
    }
}

/// The kernels that hash runs of whole chunks ([`super::chunks`]), widest
/// first: each takes the groups it can, and the chunks left over go to the
/// next, the last ones to the scalar permutation.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ChunkKernels {
    /// Eight chunks per permutation.
    #[cfg(target_arch = "x86_64")]
    pub x8: Option<Avx512>,
    /// Four chunks per permutation.
    #[cfg(target_arch = "x86_64")]
    pub x4: Option<Avx2>,
    /// Two chunks per permutation.
    #[cfg(all(target_arch = "aarch64", target_endian = "little"))]
    pub x2: Option<Sha3>,
}

impl Platform {
    /// The chunk kernels of this platform: AVX-512's eight lanes with
    /// AVX2's four for the leftovers (every CPU with AVX-512F has AVX2,
    /// but it is detected all the same), AVX2's alone, SHA3's two, or none.
    pub(crate) fn chunk_kernels(self) -> ChunkKernels {
        match self {
            Platform::Portable => ChunkKernels::default(),
            #[cfg(target_arch = "x86_64")]
            Platform::Avx2(avx2) => ChunkKernels {
                x8: None,
                x4: Some(avx2),
            },
            #[cfg(target_arch = "x86_64")]
            Platform::Avx512(avx512) => ChunkKernels {
                x8: Some(avx512),
                x4: Avx2::detect(),
            },
            #[cfg(all(target_arch = "aarch64", target_endian = "little"))]
            Platform::Sha3(sha3) => ChunkKernels { x2: Some(sha3) },
        }
    }
}

/// The kernel that absorbs the leaves of one tree (or hashes its parent
/// nodes): the CPU's code path for them.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Kernel {
    /// One scalar sponge per leaf.
    Sponges,
    /// Four neighbouring leaves per AVX2 permutation.
    #[cfg(target_arch = "x86_64")]
    Lanes4(Avx2),
    /// Eight neighbouring leaves per AVX-512 permutation.
    #[cfg(target_arch = "x86_64")]
    Lanes8(Avx512),
    /// Two neighbouring leaves per SHA3 (NEON) permutation.
    #[cfg(all(target_arch = "aarch64", target_endian = "little"))]
    Lanes2(Sha3),
}

/// A lane kernel: `W` sponges side by side in one permutation, their states
/// lane-major (`[k][i]` is lane k of sponge i). Each kernel's module
/// implements it for its token, beside its permutation; the leaves
/// (`lanes.rs`), the parent levels and the standard functions' chunks
/// (`chunks.rs`) run on it.
#[cfg(any(
    target_arch = "x86_64",
    all(target_arch = "aarch64", target_endian = "little")
))]
pub(super) trait LaneKernel<const W: usize>: Copy + Send + Sync {
    /// Sponge i of `group` absorbs `data[i·stride .. i·stride + len]` from
    /// position 0 of `spec`'s rate: `len` is whole blocks, each followed by
    /// the permutation.
    fn absorb_blocks(
        self,
        group: &mut [[u64; W]; 25],
        data: &[u8],
        stride: usize,
        len: usize,
        spec: &SpongeSpec,
    );

    /// Keccak-p[1600, `rounds`] on the `W` states of `group`.
    fn permute(self, group: &mut [[u64; W]; 25], rounds: Rounds);

    /// The permutation of one state on the same path, for a sponge's blocks
    /// absorbed alone.
    fn one_state(self) -> OneState;
}

/// `$lanes` with `$k` bound to a lane kernel's token and `$w` to its width
/// (a `const` of the arm, which shadows any `W` of the caller's), or
/// `$sponges` for the portable sponges: every `match` on a [`Kernel`] (the
/// leaves, the parent levels, the permutation benchmark) is this one. The
/// arms are expressions of the caller's function, not closures: a `return`
/// or `?` in them leaves that function.
macro_rules! with_kernel {
    ($kernel:expr, |$k:ident, $w:ident| $lanes:expr, || $sponges:expr) => {
        match $kernel {
            $crate::cpu::platform::Kernel::Sponges => $sponges,
            #[cfg(target_arch = "x86_64")]
            $crate::cpu::platform::Kernel::Lanes4($k) => {
                const $w: usize = 4;
                $lanes
            }
            #[cfg(target_arch = "x86_64")]
            $crate::cpu::platform::Kernel::Lanes8($k) => {
                const $w: usize = 8;
                $lanes
            }
            #[cfg(all(target_arch = "aarch64", target_endian = "little"))]
            $crate::cpu::platform::Kernel::Lanes2($k) => {
                const $w: usize = 2;
                $lanes
            }
        }
    };
}
pub(super) use with_kernel;

/// `$body` (a block of the caller's function, as in `with_kernel!`) for
/// each chunk kernel of `$kernels` ([`ChunkKernels`]), widest first, with
/// `$k` bound to its token and `$w` to its width.
macro_rules! each_chunk_kernel {
    ($kernels:expr, |$k:ident, $w:ident| $body:block) => {{
        let kernels: $crate::cpu::platform::ChunkKernels = $kernels;
        #[cfg(target_arch = "x86_64")]
        {
            if let Some($k) = kernels.x8 {
                const $w: usize = 8;
                $body
            }
            if let Some($k) = kernels.x4 {
                const $w: usize = 4;
                $body
            }
        }
        #[cfg(all(target_arch = "aarch64", target_endian = "little"))]
        if let Some($k) = kernels.x2 {
            const $w: usize = 2;
            $body
        }
        let _ = kernels;
    }};
}
pub(super) use each_chunk_kernel;

/// The AVX2 token for a unit test. The tests of the AVX2 path run where
/// build.rs set `treehash_test_avx2` (the CPU that built them has AVX2, or
/// `TREEHASH_REQUIRE_AVX2` or `CI` is set) and are listed as ignored
/// elsewhere: where they run, a CPU without AVX2 fails them. A test that
/// covers several paths gets `None` only where the AVX2 tests are ignored,
/// and then checks the others.
#[cfg(all(test, target_arch = "x86_64"))]
pub(super) fn avx2_for_test(test: &str) -> Option<Avx2> {
    let avx2 = Avx2::detect();
    assert!(
        avx2.is_some() || !cfg!(treehash_test_avx2),
        "{test}: this CPU has no AVX2, and this build tests the AVX2 path (built on \
         a CPU with AVX2, or with TREEHASH_REQUIRE_AVX2 or CI set)"
    );
    avx2
}

/// The AVX-512 token for a unit test, as [`avx2_for_test`] for AVX2:
/// `treehash_test_avx512` (the CPU that built the tests has AVX-512F, or
/// `TREEHASH_REQUIRE_AVX512` is set).
#[cfg(all(test, target_arch = "x86_64"))]
pub(crate) fn avx512_for_test(test: &str) -> Option<Avx512> {
    let avx512 = Avx512::detect();
    assert!(
        avx512.is_some() || !cfg!(treehash_test_avx512),
        "{test}: this CPU has no AVX-512F, and this build tests the AVX-512 path \
         (built on a CPU with AVX-512F, or with TREEHASH_REQUIRE_AVX512 set)"
    );
    avx512
}

/// The SHA3 token for a unit test, as [`avx2_for_test`] for AVX2:
/// `treehash_test_sha3` (the aarch64 CPU that built the tests has SHA3, or
/// `TREEHASH_REQUIRE_SHA3` is set). The same test binaries also run on a CPU
/// without SHA3 (scripts/ci-cross.sh, under qemu's cortex-a72): there
/// `TREEHASH_TEST_NO_SHA3` is set when they run, detection must find no
/// SHA3, and the tests check the portable kernel alone.
#[cfg(all(test, all(target_arch = "aarch64", target_endian = "little")))]
pub(crate) fn sha3_for_test(test: &str) -> Option<Sha3> {
    let sha3 = Sha3::detect();
    if std::env::var_os("TREEHASH_TEST_NO_SHA3").is_some() {
        assert!(
            sha3.is_none(),
            "{test}: TREEHASH_TEST_NO_SHA3 says this CPU has no SHA3, and detection found it"
        );
        return None;
    }
    assert!(
        sha3.is_some() || !cfg!(treehash_test_sha3),
        "{test}: this CPU has no SHA3, and this build tests the SHA3 path \
         (built on a CPU with SHA3, or with TREEHASH_REQUIRE_SHA3 set)"
    );
    sha3
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Algorithm;

    #[test]
    fn portable_is_always_there_and_auto_never_fails() {
        assert!(matches!(
            Platform::new(CpuPath::Portable),
            Ok(Platform::Portable)
        ));
        assert!(Platform::new(CpuPath::Auto).is_ok());
    }

    fn params(h: u32, d: u64, b: Option<usize>) -> TreeParams {
        TreeParams::with_options(Algorithm::Sha3_256, h, d, b, vec![], None).unwrap()
    }

    #[test]
    fn the_portable_platform_always_takes_the_sponges() {
        for (h, d, b) in [(8, 4, None), (1, 4, Some(272)), (0, 4, None)] {
            assert!(matches!(
                Platform::Portable.kernel(&params(h, d, b)),
                Kernel::Sponges
            ));
        }
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    #[cfg_attr(
        not(treehash_test_avx2),
        ignore = "the CPU that built this test has no AVX2 (build.rs)"
    )]
    fn the_avx2_lanes_only_where_the_parameters_fit() {
        let avx2 = avx2_for_test("the_avx2_lanes_only_where_the_parameters_fit")
            .expect("avx2_for_test fails where this test runs without AVX2");
        let avx2 = Platform::Avx2(avx2);
        let lanes = |h, d, b| matches!(avx2.kernel(&params(h, d, b)), Kernel::Lanes4(_));
        assert!(lanes(8, 4, None));
        assert!(lanes(1, 4, Some(272)));
        assert!(!lanes(0, 4, None), "one leaf");
        assert!(!lanes(1, 3, None), "fewer leaves than lanes");
        assert!(!lanes(8, 4, Some(64)), "B not a multiple of the rate");
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    #[cfg_attr(
        not(treehash_test_avx512),
        ignore = "the CPU that built this test has no AVX-512F (build.rs)"
    )]
    fn the_avx512_lanes_only_where_the_parameters_fit() {
        let avx512 = avx512_for_test("the_avx512_lanes_only_where_the_parameters_fit")
            .expect("avx512_for_test fails where this test runs without AVX-512F");
        let avx512 = Platform::Avx512(avx512);
        let lanes = |h, d, b| matches!(avx512.kernel(&params(h, d, b)), Kernel::Lanes8(_));
        assert!(lanes(8, 4, None));
        assert!(lanes(2, 4, Some(272)));
        assert!(!lanes(0, 4, None), "one leaf");
        assert!(!lanes(1, 4, None), "fewer leaves than lanes");
        assert!(!lanes(8, 4, Some(64)), "B not a multiple of the rate");
    }
}

#[cfg(all(test, all(target_arch = "aarch64", target_endian = "little")))]
mod sha3_tests {
    use super::*;
    use crate::params::Algorithm;

    #[test]
    #[cfg_attr(
        not(treehash_test_sha3),
        ignore = "the CPU that built this test has no SHA3 (build.rs)"
    )]
    fn the_sha3_lanes_only_where_the_parameters_fit_and_auto_takes_them() {
        let sha3 =
            sha3_for_test("the_sha3_lanes_only_where_the_parameters_fit_and_auto_takes_them")
                .expect("sha3_for_test fails where this test runs without SHA3");
        assert!(matches!(
            Platform::new(CpuPath::Auto),
            Ok(Platform::Sha3(_))
        ));
        let params =
            |h, d, b| TreeParams::with_options(Algorithm::Sha3_256, h, d, b, vec![], None).unwrap();
        let sha3 = Platform::Sha3(sha3);
        let lanes = |h, d, b| matches!(sha3.kernel(&params(h, d, b)), Kernel::Lanes2(_));
        assert!(lanes(8, 4, None));
        assert!(lanes(1, 2, Some(272)));
        assert!(!lanes(0, 4, None), "one leaf");
        assert!(!lanes(8, 4, Some(64)), "B not a multiple of the rate");
    }

    /// Without SHA3 (Graviton2, Altra; qemu's cortex-a72) `Auto` is the
    /// portable path.
    #[test]
    fn auto_is_portable_without_sha3() {
        if sha3_for_test("auto_is_portable_without_sha3").is_none() {
            assert!(matches!(
                Platform::new(CpuPath::Auto),
                Ok(Platform::Portable)
            ));
        }
    }
}
