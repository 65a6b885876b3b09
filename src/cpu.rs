//! The fast CPU backend: every leaf's sponge kept in memory, the message
//! absorbed piece by piece on all cores, then the parent levels reduced.
//!
//! Memory is L sponge states (about 208 bytes each) plus one piece of input,
//! whatever the input's size.

#[cfg(target_arch = "x86_64")]
mod keccak_x8;
#[cfg(target_arch = "x86_64")]
mod lanes;

use std::ops::Range;

use rayon::prelude::*;

use crate::engine::LeafEngine;
use crate::error::HashError;
use crate::message::{self, Access, Piece};
use crate::params::TreeParams;
use crate::sponge::{Sponge, with_sponge};
use crate::timings::{Timings, timed};

/// Bytes handed to the thread pool at a time: large enough that a dispatch
/// costs nothing, small enough for a smooth progress bar.
const PIECE_TARGET: usize = 32 << 20;
/// A mapped piece spans at least this many stripes (up to `MAX_MAPPED_PIECE`
/// bytes), so that each leaf absorbs several blocks while its state is cached.
const STRIPES_PER_PIECE: u64 = 4;
const MAX_MAPPED_PIECE: u64 = 128 << 20;
/// Leaves per task at most: 1024 states are about 208 KiB, an L2's worth.
const MAX_GROUP_LEAVES: usize = 1024;

/// The CPU backend: a pool of worker threads.
pub struct CpuBackend {
    pool: rayon::ThreadPool,
    /// Set by the caller (tests), else chosen per input.
    piece_bytes: Option<usize>,
    /// Never take the SIMD path (tests and comparisons).
    portable: bool,
}

impl CpuBackend {
    /// A backend with `threads` workers (one per core when `None`), handed
    /// pieces of about `piece_bytes` (a tuned default when `None`); with
    /// `portable`, only the portable code path (no AVX-512).
    pub fn new(
        threads: Option<usize>,
        piece_bytes: Option<usize>,
        portable: bool,
    ) -> Result<Self, HashError> {
        let mut builder = rayon::ThreadPoolBuilder::new().thread_name(|i| format!("treehash-{i}"));
        if let Some(n) = threads {
            builder = builder.num_threads(n);
        }
        let pool = builder
            .build()
            .map_err(|e| HashError::Threads(e.to_string()))?;
        Ok(CpuBackend {
            pool,
            piece_bytes,
            portable,
        })
    }

    /// True when these parameters take the AVX-512 eight-lane path here.
    pub fn has_fast_path(&self, params: &TreeParams) -> bool {
        #[cfg(target_arch = "x86_64")]
        return !self.portable && lanes::supported(params);
        #[cfg(not(target_arch = "x86_64"))]
        return {
            let _ = params;
            false
        };
    }

    /// The worker threads (the GPU backend borrows them to stage chunks).
    pub fn pool(&self) -> &rayon::ThreadPool {
        &self.pool
    }

    /// The number of worker threads.
    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// The leaves of one message, ready to absorb its pieces.
    pub(crate) fn begin<'a>(&'a self, params: &'a TreeParams) -> Box<dyn LeafEngine + 'a> {
        // A mapped piece costs nothing to hand out: make it span a few stripes.
        let target = self.piece_bytes.unwrap_or_else(|| {
            let stripes = params.stripe_len().saturating_mul(STRIPES_PER_PIECE);
            PIECE_TARGET.max(stripes.min(MAX_MAPPED_PIECE) as usize)
        });
        let piece_len = message::piece_len(params.block_size(), target);
        let fast = self.has_fast_path(params);
        with_sponge!(params.algorithm(), S => {
            Box::new(CpuLeaves {
                tree: Tree::<S>::new(params, &self.pool, fast),
                params,
                pool: &self.pool,
                piece_len,
            }) as Box<dyn LeafEngine + 'a>
        })
    }
}

/// A tree and what finishing it needs, behind the input path's interface.
struct CpuLeaves<'a, S: Sponge> {
    tree: Tree<'a, S>,
    params: &'a TreeParams,
    pool: &'a rayon::ThreadPool,
    piece_len: usize,
}

impl<S: Sponge> LeafEngine for CpuLeaves<'_, S> {
    fn piece_len(&self) -> usize {
        self.piece_len
    }

    fn access(&self) -> Access {
        Access::Map
    }

    fn absorb(&mut self, piece: Piece<'_>) -> Result<(), HashError> {
        match piece {
            Piece::Memory(bytes) | Piece::Mapped(bytes) => self.tree.absorb(bytes),
            Piece::Unread { input, offset, len } => {
                let mut bytes = vec![0u8; len];
                input.read_exact_at(&mut bytes, offset)?;
                self.tree.absorb(&bytes);
            }
        }
        Ok(())
    }

    fn finish(self: Box<Self>, times: &mut Timings) -> Result<Vec<u8>, HashError> {
        Ok(self.tree.finish(self.params, self.pool, times))
    }
}

/// The leaves of one tree on the CPU: eight to a SIMD permutation where the
/// CPU and the parameters allow it, one sponge each otherwise.
enum Tree<'a, S: Sponge> {
    Sponges(Leaves<'a, S>),
    #[cfg(target_arch = "x86_64")]
    Lanes(lanes::LaneLeaves<'a>),
}

impl<'a, S: Sponge> Tree<'a, S> {
    /// With `fast`, the eight-lane path ([`CpuBackend::has_fast_path`] said yes).
    fn new(params: &'a TreeParams, pool: &'a rayon::ThreadPool, fast: bool) -> Self {
        #[cfg(target_arch = "x86_64")]
        if fast {
            return Tree::Lanes(lanes::LaneLeaves::new(params, pool));
        }
        let _ = fast;
        Tree::Sponges(Leaves::new(params, pool))
    }

    fn absorb(&mut self, piece: &[u8]) {
        match self {
            Tree::Sponges(leaves) => leaves.absorb(piece),
            #[cfg(target_arch = "x86_64")]
            Tree::Lanes(leaves) => leaves.absorb(piece),
        }
    }

    /// Pads every leaf, then reduces the tree: the digest.
    fn finish(self, params: &TreeParams, pool: &rayon::ThreadPool, times: &mut Timings) -> Vec<u8> {
        let chaining = timed(&mut times.leaves, || match self {
            Tree::Sponges(leaves) => leaves.squeeze(),
            #[cfg(target_arch = "x86_64")]
            Tree::Lanes(leaves) => leaves.finish(),
        });
        if params.height() == 0 {
            return chaining;
        }
        timed(&mut times.reduce, || {
            reduce_levels::<S>(params, pool, chaining)
        })
    }
}

/// The state of every leaf while M is absorbed, one sponge per leaf.
struct Leaves<'a, S: Sponge> {
    params: &'a TreeParams,
    pool: &'a rayon::ThreadPool,
    sponges: Vec<S>,
    /// Blocks of M absorbed so far: the next piece starts at this block.
    blocks_done: u64,
}

impl<'a, S: Sponge> Leaves<'a, S> {
    fn new(params: &'a TreeParams, pool: &'a rayon::ThreadPool) -> Self {
        Leaves {
            params,
            pool,
            sponges: vec![S::default(); params.leaf_count() as usize],
            blocks_done: 0,
        }
    }

    /// Absorbs the next piece of M, which starts on a block boundary; every
    /// block goes to leaf (block index mod L), in order.
    fn absorb(&mut self, piece: &[u8]) {
        let b = self.params.block_size();
        let leaf_count = self.sponges.len() as u64;
        let first = self.blocks_done;
        let blocks = piece.len().div_ceil(b) as u64;
        self.blocks_done += blocks;
        if leaf_count == 1 {
            // On a pool thread, not the caller's: workers that just finished
            // spin for a while, and one more busy thread than cores would halve
            // this single sponge's speed.
            let sponge = &mut self.sponges[0];
            self.pool.install(|| sponge.absorb(piece));
            return;
        }
        let ranges = touched_leaves(first, blocks, leaf_count);
        let touched: usize = ranges.iter().map(|r| r.len()).sum();
        // Several groups per thread for balance, and few enough leaves per
        // group that their states stay in the core's cache between stripes.
        let group = touched
            .div_ceil(self.pool.current_num_threads() * 4)
            .clamp(1, MAX_GROUP_LEAVES);
        let end = first + blocks;
        let sponges = &mut self.sponges;
        self.pool.install(|| {
            for range in ranges.into_iter().filter(|r| !r.is_empty()) {
                let start = range.start;
                sponges[range]
                    .par_chunks_mut(group)
                    .enumerate()
                    .for_each(|(g, leaves)| {
                        let first_leaf = (start + g * group) as u64;
                        // Stripe by stripe: the group's blocks of one stripe are
                        // contiguous in the piece, so reads are sequential.
                        let mut stripe = first - first % leaf_count;
                        while stripe < end {
                            for (k, sponge) in leaves.iter_mut().enumerate() {
                                let i = stripe + first_leaf + k as u64;
                                if i < first {
                                    continue;
                                }
                                if i >= end {
                                    break;
                                }
                                let at = ((i - first) as usize) * b;
                                sponge.absorb(&piece[at..(at + b).min(piece.len())]);
                            }
                            stripe += leaf_count;
                        }
                    });
            }
        });
    }

    /// Pads every leaf: the leaves' outputs in order (c bytes each, or n at H = 0).
    fn squeeze(self) -> Vec<u8> {
        let out_len = self.params.leaf_output_len();
        let mut chaining = vec![0u8; self.sponges.len() * out_len];
        self.pool.install(|| {
            chaining
                .par_chunks_mut(out_len)
                .zip(self.sponges.into_par_iter())
                .for_each(|(out, sponge)| sponge.squeeze_into(out));
        });
        chaining
    }
}

/// The leaves that blocks `first .. first + blocks` reach, as two ranges, the
/// second empty unless the blocks wrap round from leaf L−1 to leaf 0.
fn touched_leaves(first: u64, blocks: u64, leaf_count: u64) -> [Range<usize>; 2] {
    let l = leaf_count as usize;
    if blocks >= leaf_count {
        return [0..l, 0..0];
    }
    let start = (first % leaf_count) as usize;
    let end = start + blocks as usize;
    if end <= l {
        [start..end, 0..0]
    } else {
        [start..l, 0..end - l]
    }
}

/// From the leaves' chaining values (level H) up to the root digest.
pub(crate) fn reduce_levels<S: Sponge>(
    params: &TreeParams,
    pool: &rayon::ThreadPool,
    mut level: Vec<u8>,
) -> Vec<u8> {
    let c = params.algorithm().chaining_len();
    let node_input = params.degree() as usize * c;
    for _ in 1..params.height() {
        let mut parents = vec![0u8; level.len() / params.degree() as usize];
        pool.install(|| {
            parents
                .par_chunks_mut(c)
                .zip(level.par_chunks(node_input))
                .with_min_len(64)
                .for_each(|(out, children)| S::hash_into(children, out));
        });
        level = parents;
    }
    let mut root = vec![0u8; params.output_len()];
    S::hash_into(&level, &mut root);
    root
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn touched_leaves_wrap_round() {
        assert_eq!(touched_leaves(0, 3, 8), [0..3, 0..0]);
        assert_eq!(touched_leaves(6, 3, 8), [6..8, 0..1]);
        assert_eq!(touched_leaves(13, 3, 8), [5..8, 0..0]);
        assert_eq!(touched_leaves(5, 8, 8), [0..8, 0..0]);
        assert_eq!(touched_leaves(5, 100, 8), [0..8, 0..0]);
    }
}
