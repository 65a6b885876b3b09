//! What a GPU is readied for, named without CUDA: an LI tree's kernels,
//! or a standard function's chunk kernel, and which chunk sponges the GPU
//! runs.

use crate::params::Algorithm;
use crate::sponge::SpongeSpec;
use crate::standard::Standard;

/// How many standard functions have chunks.
const CHUNKED_COUNT: usize = {
    let mut count = 0;
    let mut i = 0;
    while i < Standard::ALL.len() {
        if Standard::ALL[i].chunk_spec().is_some() {
            count += 1;
        }
        i += 1;
    }
    count
};

/// The chunk sponges the GPU runs: those of the standard functions that
/// have chunks, in [`Standard::ALL`]'s order.
// Reached through the hidden `gpu::kernels`, which only the `gpu` feature builds.
#[cfg_attr(not(gpu_backend), allow(unreachable_pub))]
pub const CHUNK_SPECS: [SpongeSpec; CHUNKED_COUNT] = {
    let mut specs = [Algorithm::Sha3_256.sponge_spec(); CHUNKED_COUNT];
    let (mut i, mut k) = (0, 0);
    while i < Standard::ALL.len() {
        if let Some(spec) = Standard::ALL[i].chunk_spec() {
            specs[k] = spec;
            k += 1;
        }
        i += 1;
    }
    specs
};

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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every function with chunks has its kernel, each a set of its own.
    #[test]
    fn each_chunked_function_has_a_kernel_set_of_its_own() {
        let chunked: Vec<SpongeSpec> = Standard::ALL
            .iter()
            .filter_map(|s| s.chunk_spec())
            .collect();
        assert_eq!(chunked.len(), 4);
        assert_eq!(CHUNK_SPECS.to_vec(), chunked);
        let mut indices: Vec<usize> = CHUNK_SPECS
            .iter()
            .map(|s| KernelSet::Chunks(*s).index().unwrap())
            .chain(Algorithm::ALL.map(|a| KernelSet::Tree(a).index().unwrap()))
            .collect();
        indices.sort_unstable();
        assert_eq!(indices, (0..KernelSet::COUNT).collect::<Vec<_>>());
    }
}
