//! What a GPU is readied for, named without CUDA: an LI tree's kernels,
//! or a standard function's chunk kernel, and which chunk sponges the GPU
//! runs.

use crate::params::Algorithm;
use crate::sponge::SpongeSpec;

/// The chunk sponges the GPU runs: those of the standard functions that
/// have chunks (KT128, KT256, ParallelHash128, ParallelHash256).
// Reached through the hidden `gpu::kernels`, which only the `gpu` feature builds.
#[cfg_attr(not(gpu_backend), allow(unreachable_pub))]
pub const CHUNK_SPECS: [SpongeSpec; 4] = [
    SpongeSpec::KT128,
    SpongeSpec::KT256,
    SpongeSpec::PARALLEL_HASH128,
    SpongeSpec::PARALLEL_HASH256,
];

/// What a GPU is readied for: an LI tree's kernels, or a standard
/// function's chunk kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KernelSet {
    Tree(Algorithm),
    Chunks(SpongeSpec),
}

impl KernelSet {
    /// How many sets the GPU has: tables with an entry per set are
    /// `[T; KernelSet::COUNT]`, indexed by [`KernelSet::index`].
    pub(crate) const COUNT: usize = Algorithm::ALL.len() + CHUNK_SPECS.len();

    /// Its place among the sets: the algorithms' trees in
    /// [`Algorithm::ALL`]'s order, then [`CHUNK_SPECS`]' chunk kernels;
    /// `None` for a chunk sponge the GPU does not run.
    pub(crate) fn index(self) -> Option<usize> {
        match self {
            KernelSet::Tree(algorithm) => Some(algorithm.index()),
            KernelSet::Chunks(spec) => CHUNK_SPECS
                .iter()
                .position(|s| *s == spec)
                .map(|i| Algorithm::ALL.len() + i),
        }
    }
}

impl From<Algorithm> for KernelSet {
    fn from(algorithm: Algorithm) -> KernelSet {
        KernelSet::Tree(algorithm)
    }
}

impl std::fmt::Display for KernelSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KernelSet::Tree(algorithm) => write!(f, "{algorithm}"),
            KernelSet::Chunks(spec) => f.write_str(&chunk_name(spec)),
        }
    }
}

/// A chunk sponge's name in messages and cache files: `chunks-r12-168-0b-32`
/// (rounds, rate, domain byte, output bytes).
pub(crate) fn chunk_name(spec: &SpongeSpec) -> String {
    format!(
        "chunks-r{}-{}-{:02x}-{}",
        spec.rounds().count(),
        spec.rate(),
        spec.domain(),
        spec.output_len()
    )
}
