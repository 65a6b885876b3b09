//! The fast CPU backend: the message absorbed piece by piece on all cores by
//! one of the leaf engines, then the parent levels reduced.
//!
//! - `platform`: what the CPU can run, detected once, and the one choice of
//!   engine for given parameters;
//! - `walk`: the walk over the message (which block to which leaf, stripe by
//!   stripe, on which thread), written once for every engine;
//! - `sponges`: the portable engine, one scalar sponge per leaf;
//! - `fast_sponge`: the scalar sponge of one core (OpenSSL's assembly Keccak
//!   on x86-64): height 0, the parent levels, the portable leaves;
//! - `lanes`, `keccak_x4`, `keccak_x8`: four (AVX2) or eight (AVX-512)
//!   neighbouring leaves per permutation;
//! - `reduce`: the parent levels, empty subtrees computed once per level.
//!
//! Memory is one state (about 200 bytes) per leaf that holds a block, plus one
//! piece of input: min(blocks, L) states, whatever L is.

mod fast_sponge;
mod keccak;
#[cfg(target_arch = "x86_64")]
mod keccak_x4;
#[cfg(target_arch = "x86_64")]
mod keccak_x8;
#[cfg(target_arch = "x86_64")]
mod lanes;
mod platform;
mod reduce;
mod sponges;
mod walk;

use std::fmt;
use std::marker::PhantomData;
use std::str::FromStr;

use crate::engine::{LeafEngine, LeafStates};
use crate::error::HashError;
use crate::message::{self, Access, Piece};
use crate::params::TreeParams;
use crate::sponge::{Sponge, with_sponge};
use crate::timings::{Timings, timed};

use platform::{Engine, Platform};
use walk::{Absorb, Leaves};

/// Bytes handed to the thread pool at a time: large enough that a dispatch
/// costs nothing, small enough for a smooth progress bar.
const PIECE_TARGET: usize = 32 << 20;
/// A piece spans at least this many stripes (up to `message::MAX_PIECE`
/// bytes), so that each leaf absorbs several blocks while its state is cached.
const STRIPES_PER_PIECE: u64 = 4;

/// Which CPU code path hashes the leaves. Every path gives the same digests;
/// they differ in speed and in what the CPU must have.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CpuPath {
    /// The fastest path this CPU has.
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

/// The CPU backend: a pool of worker threads and the code path they run.
pub struct CpuBackend {
    pool: rayon::ThreadPool,
    /// Set by the caller (tests), else chosen per input.
    piece_bytes: Option<usize>,
    platform: Platform,
}

impl CpuBackend {
    /// A backend with `threads` workers (one per core when `None`), handed
    /// pieces of about `piece_bytes` (a tuned default when `None`), running
    /// `path`; an error if this CPU lacks what `path` needs.
    pub fn new(
        threads: Option<usize>,
        piece_bytes: Option<usize>,
        path: CpuPath,
    ) -> Result<Self, HashError> {
        let platform = Platform::new(path)?;
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
            platform,
        })
    }

    /// True when these parameters take the AVX-512 eight-lane path here (the
    /// path whose speed the GPU's `Auto` thresholds were measured against).
    pub fn has_fast_path(&self, params: &TreeParams) -> bool {
        #[cfg(target_arch = "x86_64")]
        return matches!(self.platform.engine(params), Engine::Lanes8(_));
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

    /// The root digest from the outputs of the leaves that hold a block, in
    /// leaf order (H ≥ 1), on the worker threads.
    pub(crate) fn reduce_leaf_outputs(&self, params: &TreeParams, outputs: Vec<u8>) -> Vec<u8> {
        with_sponge!(params.algorithm(), RustCrypto => {
            reduce::reduce_levels::<fast_sponge::Fast<RustCrypto>>(params, &self.pool, outputs)
        })
    }

    /// The leaves of one message, ready to absorb its pieces.
    pub(crate) fn begin<'a>(&'a self, params: &'a TreeParams) -> Box<dyn LeafEngine + 'a> {
        // A mapped piece costs nothing to hand out: make it span a few stripes.
        let target = self.piece_bytes.unwrap_or_else(|| {
            let stripes = params.stripe_len().saturating_mul(STRIPES_PER_PIECE);
            PIECE_TARGET.max(stripes.min(message::MAX_PIECE as u64) as usize)
        });
        let piece_len = message::piece_len(params.block_size(), target);
        with_sponge!(params.algorithm(), RustCrypto => {
            type S = fast_sponge::Fast<RustCrypto>;
            match self.platform.engine(params) {
                Engine::Sponges => {
                    let engine = sponges::Sponges::<S>::default();
                    self.leaves::<S, _>(params, engine, piece_len)
                }
                #[cfg(target_arch = "x86_64")]
                Engine::Lanes4(avx2) => {
                    let engine = lanes::Lanes::<_, 4>::new(avx2, params);
                    self.leaves::<S, _>(params, engine, piece_len)
                }
                #[cfg(target_arch = "x86_64")]
                Engine::Lanes8(avx512) => {
                    let engine = lanes::Lanes::<_, 8>::new(avx512, params);
                    self.leaves::<S, _>(params, engine, piece_len)
                }
            }
        })
    }

    /// The leaves of one message on leaf engine `A`, with node function `S`.
    fn leaves<'a, S: Sponge + 'a, A: Absorb + 'a>(
        &'a self,
        params: &'a TreeParams,
        engine: A,
        piece_len: usize,
    ) -> Box<dyn LeafEngine + 'a> {
        Box::new(CpuLeaves::<S, A> {
            leaves: Leaves::new(params, &self.pool, engine),
            params,
            pool: &self.pool,
            piece_len,
            node: PhantomData,
        })
    }
}

/// One message's leaves on a CPU leaf engine `A`, and what finishing it
/// needs (node function `S`), behind the input path's interface.
struct CpuLeaves<'a, S: Sponge, A: Absorb> {
    leaves: Leaves<'a, A>,
    params: &'a TreeParams,
    pool: &'a rayon::ThreadPool,
    piece_len: usize,
    node: PhantomData<S>,
}

impl<S: Sponge, A: Absorb> LeafEngine for CpuLeaves<'_, S, A> {
    fn piece_len(&self) -> usize {
        self.piece_len
    }

    fn access(&self) -> Access {
        Access::Map
    }

    fn leaves(&self) -> std::ops::Range<u64> {
        0..self.params.leaf_count()
    }

    fn take_leaves(&mut self, _leaves: std::ops::Range<u64>) -> Result<LeafStates, HashError> {
        Err(HashError::Threads("not built yet".into()))
    }

    fn give_leaves(
        &mut self,
        _leaves: std::ops::Range<u64>,
        _states: LeafStates,
    ) -> Result<(), HashError> {
        Err(HashError::Threads("not built yet".into()))
    }

    fn finish_leaves(self: Box<Self>, times: &mut Timings) -> Result<Vec<u8>, HashError> {
        Ok(timed(&mut times.leaves, || self.leaves.finish()))
    }

    fn absorb(&mut self, piece: Piece<'_>) -> Result<(), HashError> {
        match piece {
            Piece::Memory(bytes) | Piece::Mapped(bytes) => self.leaves.absorb(bytes),
            Piece::Unread { input, offset, len } => {
                let mut bytes = vec![0u8; len];
                input.read_exact_at(&mut bytes, offset)?;
                self.leaves.absorb(&bytes);
            }
        }
        Ok(())
    }

    fn finish(self: Box<Self>, times: &mut Timings) -> Result<Vec<u8>, HashError> {
        let (params, pool) = (self.params, self.pool);
        let outputs = timed(&mut times.leaves, || self.leaves.finish());
        if params.height() > 0 {
            return Ok(timed(&mut times.reduce, || {
                reduce::reduce_levels::<S>(params, pool, outputs)
            }));
        }
        if outputs.is_empty() {
            // The empty message: its one leaf is empty.
            let mut out = vec![0u8; params.output_len()];
            S::hash_into(&[], &mut out);
            return Ok(out);
        }
        Ok(outputs)
    }
}
