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
//!
//! An engine may own only a contiguous range of the leaves, when several
//! engines share one message (issue #11): it absorbs only their blocks, and
//! hands leaf states to another engine, or takes them, at a piece boundary.
//! The states are plain Keccak states, so any two engines (another CPU path,
//! a GPU) can swap leaves.

#[doc(hidden)]
pub mod chunks;
mod fast_sponge;
pub(crate) mod keccak;
#[cfg(target_arch = "x86_64")]
mod keccak_x4;
#[cfg(target_arch = "x86_64")]
mod keccak_x8;
#[cfg(target_arch = "x86_64")]
mod lanes;
mod platform;
mod reduce;
mod sponges;
mod units;
mod walk;
pub(crate) mod workers;

use std::fmt;
use std::marker::PhantomData;
use std::ops::Range;
use std::str::FromStr;

use crate::engine::{LeafEngine, LeafStates, kept_after_taking, owned_after_giving, owned_runs};
use crate::error::HashError;
use crate::message::{self, Access, Piece};
use crate::params::TreeParams;
use crate::sponge::{Sponge, with_sponge};
use crate::timings::{Timings, timed};

pub(crate) use keccak::Rounds;
use platform::{Engine, Platform};
use walk::{Absorb, Leaves};
use workers::Workers;

/// Bytes handed to the thread pool at a time: large enough that a dispatch
/// costs nothing, small enough for a smooth progress bar.
const PIECE_TARGET: usize = 32 << 20;
/// A piece spans at least this many stripes (up to `message::MAX_PIECE`
/// bytes), so that each leaf absorbs several blocks while its state is cached.
const STRIPES_PER_PIECE: u64 = 4;
/// Leaves per thread whose states a piece of `STRIPES_PER_PIECE` stripes
/// serves well. A thread that owns more walks its states once per piece,
/// and its pieces span more stripes. Measured on the H200 machine's Xeon
/// at H = 8 (65,536 leaves, docs/PERFORMANCE.md): one thread went from 1.46
/// to 2.04 GB/s with 128 MiB pieces on one machine and from 1.76 to 2.10
/// on another; at four threads longer pieces gained nothing.
const LEAVES_CACHED_PER_THREAD: u64 = 16384;
/// The piece where even one stripe is longer than the longest piece (from
/// H = 10 at SHA3-256, D = 4): every leaf then absorbs one block per piece
/// at most, however long the piece, so a long one gains nothing. Half the
/// longest keeps the windows mapped at once (read ahead, hashed, being
/// unmapped: six at most) within 384 MiB next to the leaves' states, which
/// fill the memory at these heights (3.2 GiB at 2^24 leaves); with four
/// windows of the longest, peak RSS would reach the states plus 512 MiB.
const ONE_BLOCK_PER_LEAF_PIECE: usize = message::MAX_PIECE / 2;

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

/// Inputs up to this size are hashed inline, on the calling thread alone:
/// below it waking the pool costs more than it saves, above it the pool's
/// cores win (500 files of 200 KB: 0.37 s on one thread against 0.29 s on a
/// pool of two; 16, 64 and 256 KiB measured alike on 16 cores within their
/// noise: docs/PERFORMANCE.md, "Many small files").
pub(crate) const INLINE_MAX: u64 = 64 << 10;

thread_local! {
    /// Set while this thread hashes an input inline: the engines begun
    /// meanwhile loop on it alone.
    static INLINE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `work` with [`INLINE`] set to `inline` on this thread, and restores
/// the value it had (also when `work` panics).
fn with_inline<R>(inline: bool, work: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            INLINE.set(self.0);
        }
    }
    let _restore = Restore(INLINE.replace(inline));
    work()
}

/// Runs `work` on a thread of its own and waits for it: a rayon worker that
/// waited for another pool (or for windows and GPUs) itself would either
/// take a worker from the hashing or, if it is another pool's, run that
/// pool's next jobs while it waits, nesting the caller's work inside ours.
/// A plain thread's join waits without running anything.
pub(crate) fn off_rayon_workers<R: Send>(work: impl FnOnce() -> R + Send) -> R {
    if rayon::current_thread_index().is_none() {
        return work();
    }
    std::thread::scope(|s| match s.spawn(work).join() {
        Ok(out) => out,
        Err(panic) => std::panic::resume_unwind(panic),
    })
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

    /// The worker threads (the GPU backend borrows them to stage chunks).
    pub fn pool(&self) -> &rayon::ThreadPool {
        &self.pool
    }

    /// The number of worker threads.
    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// Runs `work`, the hashing of an input of one piece (`len` bytes), in
    /// one call: up to [`INLINE_MAX`] bytes inline on the calling thread,
    /// where the engines begun inside `work` loop on it alone; larger, on
    /// the pool, where the steps' own calls into the pool are then direct.
    /// Called step by step from outside, each step (the piece, the leaves'
    /// padding, each parent level) would wake the pool's workers and leave
    /// them spinning, which costs more than a small file's hashing
    /// (docs/PERFORMANCE.md, "Many small files").
    pub(crate) fn run_one_piece<R: Send>(&self, len: u64, work: impl FnOnce() -> R + Send) -> R {
        if len <= INLINE_MAX {
            return with_inline(true, work);
        }
        if self.pool.current_thread_index().is_some() {
            return with_inline(false, work);
        }
        off_rayon_workers(|| self.pool.install(|| with_inline(false, work)))
    }

    /// Runs `work`, the hashing of an input of several pieces, which waits
    /// for windows, GPUs and the pool: from the calling thread, or from a
    /// thread of its own when the caller is a rayon worker; its engines use
    /// the pool.
    pub(crate) fn run_pieces<R: Send>(&self, work: impl FnOnce() -> R + Send) -> R {
        off_rayon_workers(|| with_inline(false, work))
    }

    /// Runs `work`, the hashing of an input of any length, on the calling
    /// thread alone, its engines looping there (one input of many hashed
    /// side by side, each on its own thread).
    pub(crate) fn run_alone<R>(&self, work: impl FnOnce() -> R) -> R {
        with_inline(true, work)
    }

    /// The threads the engines hash on: the calling thread alone for an
    /// input that [`CpuBackend::run_one_piece`] runs inline, else the pool.
    pub(crate) fn workers(&self) -> Workers<'_> {
        if INLINE.get() {
            Workers::Inline
        } else {
            Workers::Pool(&self.pool)
        }
    }

    /// The root digest from the outputs of the leaves that hold a block, in
    /// leaf order (H ≥ 1), on the worker threads.
    pub(crate) fn reduce_leaf_outputs(&self, params: &TreeParams, outputs: Vec<u8>) -> Vec<u8> {
        let nodes = self.platform.node_engine();
        with_sponge!(params.algorithm(), RustCrypto => {
            reduce_on::<RustCrypto>(nodes, params, self.workers(), outputs)
        })
    }

    /// Every leaf of one message, ready to absorb its pieces.
    pub(crate) fn begin<'a>(&'a self, params: &'a TreeParams) -> Box<dyn LeafEngine + 'a> {
        self.engine(params, 0..params.leaf_count(), 0)
    }

    /// Parents below the root whose D children are all given (D·c bytes
    /// each in `children`, back to back) into `out`, c bytes each: the
    /// parent levels' engine, for the subtrees of a part (`crate::parts`).
    pub(crate) fn whole_nodes(&self, params: &TreeParams, children: &[u8], out: &mut [u8]) {
        let workers = self.workers();
        match self.platform.node_engine() {
            Engine::Sponges => {
                with_sponge!(params.algorithm(), S => {
                    let nodes = sponges::Sponges::<S>::default();
                    reduce::whole_nodes(params, workers, &nodes, children, out)
                })
            }
            #[cfg(target_arch = "x86_64")]
            Engine::Lanes4(avx2) => {
                let nodes = lanes::Lanes::<_, 4>::for_nodes(avx2, params.algorithm());
                reduce::whole_nodes(params, workers, &nodes, children, out)
            }
            #[cfg(target_arch = "x86_64")]
            Engine::Lanes8(avx512) => {
                let nodes = lanes::Lanes::<_, 8>::for_nodes(avx512, params.algorithm());
                reduce::whole_nodes(params, workers, &nodes, children, out)
            }
        }
    }

    /// An engine for one message that owns no leaf yet, positioned after its
    /// first `message_len` bytes (a whole number of blocks): it takes its
    /// leaves from other engines through `give_leaves` (or a part's leaves
    /// at 0, `crate::parts`).
    pub(crate) fn begin_at<'a>(
        &'a self,
        params: &'a TreeParams,
        message_len: u64,
    ) -> Box<dyn LeafEngine + 'a> {
        self.engine(params, 0..0, message_len)
    }

    /// The chaining values of whole chunks (`chunk_len` bytes each, back to
    /// back) through `spec`'s sponge, on this backend's code path, on the
    /// calling thread.
    pub(crate) fn chaining_values(
        &self,
        spec: &chunks::LeafSpec,
        chunks: &[u8],
        chunk_len: usize,
        out: &mut [u8],
    ) {
        chunks::chaining_values_on(self.platform, spec, chunks, chunk_len, out);
    }

    /// About how many bytes a piece of a standard function's message holds:
    /// its chunks, unlike LI's leaves, hold no state from piece to piece.
    pub(crate) fn standard_piece_target(&self) -> usize {
        self.piece_bytes.unwrap_or(PIECE_TARGET)
    }

    /// The piece length for `params`: a mapped piece costs nothing to hand
    /// out, so it spans a few stripes, more where each thread owns more
    /// leaves than its cache keeps.
    pub(crate) fn piece_len(&self, params: &TreeParams) -> usize {
        let target = self.piece_bytes.unwrap_or_else(|| {
            if params.stripe_len() > message::MAX_PIECE as u64 {
                return ONE_BLOCK_PER_LEAF_PIECE;
            }
            let cached = self.threads() as u64 * LEAVES_CACHED_PER_THREAD;
            let shares = params.leaf_count().div_ceil(cached);
            let stripes = params
                .stripe_len()
                .saturating_mul(STRIPES_PER_PIECE.saturating_mul(shares));
            PIECE_TARGET.max(stripes.min(message::MAX_PIECE as u64) as usize)
        });
        message::piece_len(params.block_size(), target)
    }

    /// The fresh leaves `owned` of one message, after its first `message_len` bytes.
    fn engine<'a>(
        &'a self,
        params: &'a TreeParams,
        owned: Range<u64>,
        message_len: u64,
    ) -> Box<dyn LeafEngine + 'a> {
        let piece_len = self.piece_len(params);
        let at = Position {
            owned,
            message_len,
            piece_len,
        };
        with_sponge!(params.algorithm(), RustCrypto => {
            match self.platform.engine(params) {
                Engine::Sponges => {
                    let engine = sponges::Sponges::<RustCrypto>::default();
                    self.leaves::<RustCrypto, _>(params, engine, at)
                }
                #[cfg(target_arch = "x86_64")]
                Engine::Lanes4(avx2) => {
                    let engine = lanes::Lanes::<_, 4>::new(avx2, params);
                    self.leaves::<RustCrypto, _>(params, engine, at)
                }
                #[cfg(target_arch = "x86_64")]
                Engine::Lanes8(avx512) => {
                    let engine = lanes::Lanes::<_, 8>::new(avx512, params);
                    self.leaves::<RustCrypto, _>(params, engine, at)
                }
            }
        })
    }

    /// The leaves of one message on leaf engine `A`, with the function of
    /// the RustCrypto sponge `S`.
    fn leaves<'a, S: Sponge + 'a, A: Absorb + 'a>(
        &'a self,
        params: &'a TreeParams,
        engine: A,
        at: Position,
    ) -> Box<dyn LeafEngine + 'a> {
        Box::new(CpuLeaves::<S, A> {
            leaves: Leaves::new(params, self.workers(), engine, at.owned, at.message_len),
            params,
            workers: self.workers(),
            piece_len: at.piece_len,
            unread: Vec::new(),
            nodes: self.platform.node_engine(),
            node: PhantomData,
        })
    }
}

/// Where a new engine starts: its leaves, the bytes of M behind it, and the
/// piece length it asks for.
struct Position {
    owned: Range<u64>,
    message_len: u64,
    piece_len: usize,
}

/// One message's leaves on a CPU leaf engine `A`, and what finishing it
/// needs (the function of the RustCrypto sponge `S`), behind the input
/// path's interface.
struct CpuLeaves<'a, S: Sponge, A: Absorb> {
    leaves: Leaves<'a, A>,
    params: &'a TreeParams,
    workers: Workers<'a>,
    piece_len: usize,
    /// Where an unread piece's own runs are read to.
    unread: Vec<u8>,
    /// The engine of the parent levels.
    nodes: Engine,
    node: PhantomData<S>,
}

/// A caller broke the `LeafEngine` contract (a bug, never the input's fault).
fn contract_broken(what: &str) -> HashError {
    HashError::Internal(what.to_string())
}

impl<S: Sponge, A: Absorb> LeafEngine for CpuLeaves<'_, S, A> {
    fn piece_len(&self) -> usize {
        self.piece_len
    }

    fn access(&self) -> Access {
        Access::Map
    }

    fn leaves(&self) -> Range<u64> {
        self.leaves.owned()
    }

    fn absorb(&mut self, piece: Piece<'_>) -> Result<(), HashError> {
        match piece {
            Piece::Memory(bytes) | Piece::Mapped { bytes, .. } => self.leaves.absorb(bytes)?,
            // Owning no leaf (a GPU has them all), it reads nothing.
            Piece::Unread { len, .. } if self.leaves.owned().is_empty() => self.leaves.skip(len),
            // Given leaves while the pieces ahead were left unread for a
            // GPU: only the runs of its own leaves are read, in parallel,
            // into a buffer kept for the next such piece (the walk looks
            // at nothing else).
            Piece::Unread { input, offset, len } => {
                let runs = owned_runs(
                    self.params,
                    &self.leaves.owned(),
                    self.leaves.message_len(),
                    len,
                );
                self.unread.resize(len, 0);
                let mut parts = Vec::with_capacity(runs.len());
                let (mut rest, mut at) = (&mut self.unread[..len], 0);
                for run in runs {
                    let (part, after) =
                        std::mem::take(&mut rest)[run.start - at..].split_at_mut(run.len());
                    parts.push((part, offset + run.start as u64));
                    (rest, at) = (after, run.end);
                }
                match self.workers {
                    Workers::Pool(pool) => pool.install(|| input.read_parts_at(parts))?,
                    Workers::Inline => {
                        for (part, at) in parts {
                            input.read_exact_at(part, at)?;
                        }
                    }
                }
                self.leaves.absorb(&self.unread[..len])?;
            }
        }
        Ok(())
    }

    // Migrations are rare: every own state is taken out, and the walk is
    // rebuilt over the leaves the engine owns afterwards.
    fn take_leaves(&mut self, leaves: Range<u64>) -> Result<LeafStates, HashError> {
        let own = self.leaves.owned();
        let Some(kept) = kept_after_taking(&own, &leaves) else {
            return Err(contract_broken(&format!(
                "leaves {leaves:?} taken from an engine that owns {own:?}"
            )));
        };
        // `states` has one entry per own leaf that holds a block: fewer than
        // the own leaves when the last of them hold none yet.
        let mut states = self.leaves.states();
        let from_start = leaves.start == own.start;
        let cut = (if from_start { leaves.end } else { leaves.start }) - own.start;
        let after = states.split_off((cut as usize).min(states.len()));
        let (kept_states, taken) = if from_start {
            (after, states)
        } else {
            (states, after)
        };
        self.leaves.set_states(kept, &kept_states)?;
        Ok(taken)
    }

    fn give_leaves(&mut self, leaves: Range<u64>, states: LeafStates) -> Result<(), HashError> {
        let own = self.leaves.owned();
        let count = leaves.end.saturating_sub(leaves.start);
        if leaves.start > leaves.end
            || leaves.end > self.params.leaf_count()
            || states.len() as u64 > count
        {
            return Err(contract_broken(&format!(
                "{} states given for leaves {leaves:?} of {}",
                states.len(),
                self.params.leaf_count()
            )));
        }
        let Some(all) = owned_after_giving(&own, &leaves) else {
            return Err(contract_broken(&format!(
                "leaves {leaves:?} given to an engine that owns {own:?}"
            )));
        };
        let joined = if own.is_empty() {
            states
        } else if leaves.end == own.start {
            join_states(states, count, self.leaves.states())
        } else {
            join_states(self.leaves.states(), own.end - own.start, states)
        };
        self.leaves.set_states(all, &joined)?;
        Ok(())
    }

    fn finish_leaves(self: Box<Self>, times: &mut Timings) -> Result<Vec<u8>, HashError> {
        Ok(timed(&mut times.leaves, || self.leaves.finish())?)
    }

    fn finish(self: Box<Self>, times: &mut Timings) -> Result<Vec<u8>, HashError> {
        let (params, workers, nodes) = (self.params, self.workers, self.nodes);
        let own = self.leaves.owned();
        if own != (0..params.leaf_count()) {
            return Err(contract_broken(&format!(
                "finish on an engine that owns leaves {own:?} of {}",
                params.leaf_count()
            )));
        }
        let outputs = self.finish_leaves(times)?;
        Ok(timed(&mut times.reduce, || {
            digest_of_leaves::<S>(nodes, params, workers, outputs)
        }))
    }
}

/// The states of two neighbouring leaf ranges, `first` of the `first_len`
/// leaves before `second`'s: where `first` stops early its leaves are
/// fresh, which matters only when `second` holds states after them.
fn join_states(mut first: LeafStates, first_len: u64, second: LeafStates) -> LeafStates {
    if !second.is_empty() {
        first.resize(first_len as usize, [0; 25]);
        first.extend(second);
    }
    first
}

/// The digest from the outputs of the leaves that hold a block, in leaf
/// order, for the function of the RustCrypto sponge `S`, the parent levels
/// on `nodes`.
fn digest_of_leaves<S: Sponge>(
    nodes: Engine,
    params: &TreeParams,
    workers: Workers<'_>,
    outputs: Vec<u8>,
) -> Vec<u8> {
    if params.height() > 0 {
        return reduce_on::<S>(nodes, params, workers, outputs);
    }
    if outputs.is_empty() {
        // The empty message: its one leaf is empty.
        let mut out = vec![0u8; params.output_len()];
        fast_sponge::Fast::<S>::hash_into(&[], &mut out);
        return out;
    }
    outputs
}

/// The root digest from the outputs of the leaves that hold a block (H ≥ 1),
/// for the function of the RustCrypto sponge `S`: the parent levels on
/// `nodes`, the root on one core.
fn reduce_on<S: Sponge>(
    nodes: Engine,
    params: &TreeParams,
    workers: Workers<'_>,
    outputs: Vec<u8>,
) -> Vec<u8> {
    type Node<S> = fast_sponge::Fast<S>;
    match nodes {
        Engine::Sponges => {
            let nodes = sponges::Sponges::<S>::default();
            reduce::reduce_levels::<Node<S>, _>(params, workers, &nodes, outputs)
        }
        #[cfg(target_arch = "x86_64")]
        Engine::Lanes4(avx2) => {
            let nodes = lanes::Lanes::<_, 4>::for_nodes(avx2, params.algorithm());
            reduce::reduce_levels::<Node<S>, _>(params, workers, &nodes, outputs)
        }
        #[cfg(target_arch = "x86_64")]
        Engine::Lanes8(avx512) => {
            let nodes = lanes::Lanes::<_, 8>::for_nodes(avx512, params.algorithm());
            reduce::reduce_levels::<Node<S>, _>(params, workers, &nodes, outputs)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::leaves_with_blocks;
    use crate::params::Algorithm;
    use crate::progress::NoProgress;
    use crate::reference;

    /// splitmix64: a seeded stream, so that a failure can be replayed.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }

        /// A number in `0 ..= most`.
        fn up_to(&mut self, most: u64) -> u64 {
            self.next() % (most + 1)
        }

        fn coin(&mut self) -> bool {
            self.next() & 1 == 1
        }
    }

    /// Parameters that reach every engine and edge: B < rate and B not a
    /// multiple of the rate (portable sponges on every path), B a multiple of
    /// the rate (lane groups on a SIMD path, whole at L = 4, cut by ranges
    /// at L = 16 and 2^10), prefixes, XOF outputs, and H = 0 (L = 1).
    fn cases() -> Vec<TreeParams> {
        let p = |a, h, d, b, prefix: &[u8], n| {
            TreeParams::with_options(a, h, d, b, prefix.to_vec(), n).unwrap()
        };
        vec![
            p(Algorithm::Sha3_256, 2, 4, None, b"", None),
            p(Algorithm::Sha3_256, 1, 4, Some(64), b"", None),
            p(Algorithm::Sha3_256, 2, 2, Some(200), b"", None),
            p(Algorithm::Shake128, 1, 2, Some(336), b"salt!", Some(40)),
            p(Algorithm::Sha3_512, 0, 4, None, b"key", None),
            p(Algorithm::Shake256, 0, 2, None, b"", Some(300)),
            p(Algorithm::Sha3_384, 5, 4, None, b"", None),
            p(Algorithm::Sha3_224, 10, 2, Some(288), &[7; 200], None),
        ]
    }

    /// File sizes around the rate, B, the stripe and two stripes, and 0.
    fn sizes(params: &TreeParams) -> Vec<usize> {
        let (r, b) = (params.algorithm().rate(), params.block_size());
        let stripe = params.stripe_len() as usize;
        let mut sizes = vec![0, 1, r - 1, r, r + 1, b + 1, stripe - 1, stripe, stripe + 1];
        sizes.extend([2 * stripe + b / 2, 3 * stripe + 8]);
        sizes
    }

    fn file(len: usize, seed: u64) -> Vec<u8> {
        let mut rng = Rng(seed);
        (0..len).map(|_| rng.next() as u8).collect()
    }

    /// The outputs of the leaves that hold a block, from the spec's steps 1 to 4.
    fn reference_leaf_outputs(params: &TreeParams, file: &[u8]) -> Vec<u8> {
        let message: Vec<u8> = params.prefix().iter().chain(file).copied().collect();
        let leaf_count = params.leaf_count() as usize;
        let mut leaves = vec![Vec::new(); leaf_count];
        for (i, block) in message.chunks(params.block_size()).enumerate() {
            leaves[i % leaf_count].extend_from_slice(block);
        }
        let holding = leaves_with_blocks(params, message.len() as u64) as usize;
        leaves[..holding]
            .iter()
            .flat_map(|leaf| {
                reference::node_function(params.algorithm(), leaf, params.leaf_output_len())
            })
            .collect()
    }

    /// The digest from leaf outputs, as `finish` makes it.
    fn digest(params: &TreeParams, pool: &rayon::ThreadPool, outputs: Vec<u8>) -> Vec<u8> {
        with_sponge!(params.algorithm(), R => {
            digest_of_leaves::<R>(Engine::Sponges, params, Workers::Pool(pool), outputs)
        })
    }

    fn backend(path: CpuPath, piece_bytes: usize) -> CpuBackend {
        CpuBackend::new(Some(2), Some(piece_bytes), path).unwrap()
    }

    /// One message fed to leaves that absorb pieces in slices where the
    /// units are few for the threads.
    struct SliceCase<'a> {
        params: &'a TreeParams,
        pool: &'a rayon::ThreadPool,
        owned: Range<u64>,
        file: &'a [u8],
        piece_len: usize,
        slice_bytes: usize,
    }

    impl SliceCase<'_> {
        /// The outputs of `engine` owning the leaves `owned`, fed the file in
        /// pieces of `piece_len` bytes, slices of `slice_bytes` per unit; and
        /// how many pieces were absorbed in slices.
        fn outputs<A: Absorb>(&self, engine: A) -> (Vec<u8>, usize) {
            let params = self.params;
            let mut leaves = Leaves::new(
                params,
                Workers::Pool(self.pool),
                engine,
                self.owned.clone(),
                0,
            )
            .with_slice_bytes(self.slice_bytes);
            message::for_each_piece_of_slice(params, self.file, self.piece_len, &NoProgress, |p| {
                let Piece::Memory(bytes) = p else {
                    unreachable!("a slice is read from memory")
                };
                Ok::<_, HashError>(leaves.absorb(bytes)?)
            })
            .unwrap();
            let sliced = leaves.pieces_in_slices;
            (leaves.finish().unwrap(), sliced)
        }
    }

    /// The node engine of every path this CPU has, by name.
    fn node_engines() -> Vec<(&'static str, Engine)> {
        #[allow(unused_mut)]
        let mut engines = vec![("portable", Engine::Sponges)];
        #[cfg(target_arch = "x86_64")]
        {
            let test = "parent_levels_on_every_engine_give_the_reference_digest";
            if let Some(avx2) = platform::avx2_for_test(test) {
                engines.push(("avx2", Engine::Lanes4(avx2)));
            }
            if let Some(avx512) = platform::Avx512::detect() {
                engines.push(("avx512", Engine::Lanes8(avx512)));
            }
        }
        engines
    }

    /// Parent levels W nodes at a time on every engine: nodes shorter than a
    /// rate block (D·c = 128 < 136), of whole rate blocks (17 · 32 = 4 · 136),
    /// and both (5 · 64 = 4 · 72 + 32); levels of no node, of fewer than a
    /// unit's width, of a width and one more; a last parent with empty
    /// children; a root longer than the rate (SHAKE256, 300 bytes).
    #[test]
    fn parent_levels_on_every_engine_give_the_reference_digest() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let p = |a, h, d, n| TreeParams::with_options(a, h, d, None, vec![], n).unwrap();
        let cases = [
            p(Algorithm::Sha3_256, 5, 4, None),
            p(Algorithm::Sha3_256, 2, 17, None),
            p(Algorithm::Sha3_512, 3, 5, None),
            p(Algorithm::Shake256, 4, 3, Some(300)),
            p(Algorithm::Sha3_224, 7, 2, None),
        ];
        let engines = node_engines();
        for params in cases {
            let (b, l) = (params.block_size(), params.leaf_count() as usize);
            let mut holding = vec![0, 1, 7, 8, 9, 17, 65, l - 1, l];
            holding.retain(|&n| n <= l);
            for leaves in holding {
                // `leaves` leaves hold a block, the last one a short one.
                let file = file((leaves * b).saturating_sub(b / 2), leaves as u64);
                let want = reference::tree_hash(&params, &file);
                let outputs = reference_leaf_outputs(&params, &file);
                for &(name, nodes) in &engines {
                    for workers in [Workers::Pool(&pool), Workers::Inline] {
                        let got = with_sponge!(params.algorithm(), R => {
                            digest_of_leaves::<R>(nodes, &params, workers, outputs.clone())
                        });
                        let case = format!("{name}, {workers:?}: {}", params.label());
                        assert_eq!(got, want, "{case}, {leaves} leaves");
                    }
                }
            }
        }
    }

    /// Few units for many threads (L = 256 on 16 threads, as at H = 4 on
    /// the 16-core host): pieces that start mid-stripe, absorbed in slices
    /// of one stripe or several by whichever thread is free, give the
    /// reference's leaf outputs on every engine, whole trees and leaf ranges.
    #[test]
    fn leaves_absorbed_in_slices_give_the_reference_outputs() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(16)
            .build()
            .unwrap();
        let p =
            |a, h, d, b: Option<usize>| TreeParams::with_options(a, h, d, b, vec![], None).unwrap();
        let cases = [
            p(Algorithm::Sha3_256, 4, 4, None),
            p(Algorithm::Sha3_512, 3, 4, Some(144)),
            p(Algorithm::Shake128, 2, 4, Some(336)),
            p(Algorithm::Sha3_224, 1, 8, Some(144)),
            // B not a multiple of the rate: portable sponges only.
            p(Algorithm::Sha3_384, 2, 3, Some(200)),
        ];
        let mut sliced_pieces = 0;
        for params in cases {
            let (b, l) = (params.block_size(), params.leaf_count());
            let stripe = params.stripe_len() as usize;
            let out_len = params.leaf_output_len();
            for len in [5 * stripe + b / 2, 9 * stripe + 1, 3 * stripe] {
                let file = file(len, len as u64 ^ 0x51ce);
                let want = reference_leaf_outputs(&params, &file);
                let holding = (want.len() / out_len) as u64;
                for owned in [0..l, l / 4..l, 0..l / 2 + 1] {
                    let own_holding = owned.start.min(holding)..owned.end.min(holding);
                    let want = &want
                        [own_holding.start as usize * out_len..own_holding.end as usize * out_len];
                    // Pieces of seven stripes and a half block's worth of
                    // blocks, so that most start mid-stripe.
                    let piece_len = 7 * stripe + b * (l as usize / 2).max(1);
                    for slice_bytes in [1, 3 * 8 * b] {
                        let label = format!(
                            "{}, {len} bytes, {owned:?}, slices {slice_bytes}",
                            params.label()
                        );
                        // Units of `width` leaves, fewer than four tasks for
                        // each of the 16 threads: slices of one stripe
                        // leave no piece of several stripes whole.
                        let run = |(outputs, sliced): (Vec<u8>, usize), name: &str, width| {
                            assert!(
                                outputs == want,
                                "{name}: {label}: not the reference's outputs"
                            );
                            let few = (owned.end - owned.start).div_ceil(width) < 4 * 16;
                            if slice_bytes == 1 && few && len > piece_len {
                                assert!(sliced > 0, "{name}: {label}: no piece in slices");
                            }
                            sliced
                        };
                        let case = SliceCase {
                            params: &params,
                            pool: &pool,
                            owned: owned.clone(),
                            file: &file,
                            piece_len,
                            slice_bytes,
                        };
                        with_sponge!(params.algorithm(), R => {
                            sliced_pieces += run(case.outputs(sponges::Sponges::<R>::default()), "portable", 1);
                        });
                        #[cfg(target_arch = "x86_64")]
                        if b.is_multiple_of(params.algorithm().rate()) {
                            let test = "leaves_absorbed_in_slices_give_the_reference_outputs";
                            if let Some(avx2) = platform::avx2_for_test(test) {
                                sliced_pieces += run(
                                    case.outputs(lanes::Lanes::<_, 4>::new(avx2, &params)),
                                    "avx2",
                                    4,
                                );
                            }
                            if let Some(avx512) = platform::avx512_for_test(test)
                                && l >= 8
                            {
                                sliced_pieces += run(
                                    case.outputs(lanes::Lanes::<_, 8>::new(avx512, &params)),
                                    "avx512",
                                    8,
                                );
                            }
                        }
                    }
                }
            }
        }
        assert!(
            sliced_pieces > 50,
            "only {sliced_pieces} pieces were absorbed in slices"
        );
    }

    #[test]
    fn pieces_grow_where_a_thread_owns_more_leaves_than_it_caches() {
        // A stripe of H = 8, D = 4: 65,536 blocks of 136 bytes, 8,912,896 bytes.
        let h8 = TreeParams::new(Algorithm::Sha3_256, 8, 4).unwrap();
        let pieces = |threads| {
            CpuBackend::new(Some(threads), None, CpuPath::Portable)
                .unwrap()
                .piece_len(&h8)
        };
        // 65,536 leaves: four threads or more, four stripes a piece.
        assert_eq!(pieces(4), 35_651_584);
        assert_eq!(pieces(16), 35_651_584);
        // Two and three threads own more than a piece serves: eight stripes.
        assert_eq!(pieces(2), 71_303_168);
        assert_eq!(pieces(3), 71_303_168);
        // One thread: as long as a piece may be, whole blocks below 128 MiB.
        assert_eq!(pieces(1), 134_217_720);
        // Few leaves: unchanged whatever the threads.
        let h4 = TreeParams::new(Algorithm::Sha3_256, 4, 4).unwrap();
        let one = CpuBackend::new(Some(1), None, CpuPath::Portable).unwrap();
        // 32 MiB rounded up to whole blocks of 136 bytes.
        assert_eq!(one.piece_len(&h4), 33_554_464);
        // A stripe longer than the longest piece (H = 10: 142,606,336 bytes;
        // 4^10 · 136): 64 MiB rounded up to whole blocks, whatever the threads.
        for h in [10, 12] {
            let wide = TreeParams::new(Algorithm::Sha3_256, h, 4).unwrap();
            assert_eq!(one.piece_len(&wide), 67_108_928, "H = {h}");
            let sixteen = CpuBackend::new(Some(16), None, CpuPath::Portable).unwrap();
            assert_eq!(sixteen.piece_len(&wide), 67_108_928, "H = {h}");
        }
        // H = 9: four stripes of 35,651,584 bytes, the longest piece at one thread.
        let h9 = TreeParams::new(Algorithm::Sha3_256, 9, 4).unwrap();
        assert_eq!(one.piece_len(&h9), 134_217_720);
    }

    /// Two engines of different paths own [0, k) and [k, L) from the start
    /// and absorb the same pieces: their outputs, one after the other, are
    /// the leaves', and reduce to the digest. The pieces come from memory,
    /// and from a file left unread (as for a GPU that owned every leaf), of
    /// which each engine reads only its own runs.
    #[test]
    fn engines_over_a_split_give_the_reference_digest() {
        use std::io::Write;
        let (low, high) = (backend(CpuPath::Portable, 1), backend(CpuPath::Auto, 1));
        let unmapped = std::sync::atomic::AtomicBool::new(true);
        for params in cases() {
            let l = params.leaf_count();
            let mut splits = vec![0, 1, l / 2, l - 1, l, 5.min(l), 6.min(l)];
            splits.dedup();
            for len in sizes(&params) {
                let file = file(len, len as u64);
                let want = reference_leaf_outputs(&params, &file);
                let mut tmp = tempfile::NamedTempFile::new().unwrap();
                tmp.write_all(&file).unwrap();
                // An empty file is read as a stream: memory only.
                let input = match crate::input::Source::open(tmp.path()).unwrap() {
                    crate::input::Source::File(input) => Some(input),
                    crate::input::Source::Stream(_) => None,
                };
                for &k in &splits {
                    let case = format!("{}, {len} bytes, split at {k}", params.label());
                    let outputs = split_outputs(&low, &high, &params, k, |absorb| {
                        message::for_each_piece_of_slice(
                            &params,
                            &file,
                            low.piece_len(&params),
                            &NoProgress,
                            absorb,
                        )
                    });
                    assert_eq!(outputs, want, "{case}");
                    assert_eq!(
                        digest(&params, low.pool(), outputs),
                        reference::tree_hash(&params, &file),
                        "{case}"
                    );
                    let Some(input) = &input else { continue };
                    let mut unread = 0;
                    let outputs = split_outputs(&low, &high, &params, k, |absorb| {
                        message::for_each_piece_of_file(
                            &params,
                            input,
                            low.piece_len(&params),
                            message::Access::Read,
                            &unmapped,
                            &NoProgress,
                            |p| {
                                unread += usize::from(matches!(p, Piece::Unread { .. }));
                                absorb(p)
                            },
                        )
                    });
                    // Every piece past the prefix's blocks comes unread.
                    let prefix = params.prefix().len();
                    let in_head = prefix.next_multiple_of(params.block_size()) - prefix;
                    assert_eq!(
                        unread > 0,
                        params.prefix().is_empty() || len > in_head,
                        "{case}"
                    );
                    assert_eq!(outputs, want, "{case}, unread");
                }
            }
        }
    }

    /// The leaf outputs of engines of `low` and `high` owning [0, k) and
    /// [k, L), fed the same pieces by `feed`.
    fn split_outputs(
        low: &CpuBackend,
        high: &CpuBackend,
        params: &TreeParams,
        k: u64,
        feed: impl FnOnce(&mut dyn FnMut(Piece<'_>) -> Result<(), HashError>) -> Result<(), HashError>,
    ) -> Vec<u8> {
        let l = params.leaf_count();
        let mut below = low.begin_at(params, 0);
        let mut above = high.begin_at(params, 0);
        below.give_leaves(0..k, vec![]).unwrap();
        above.give_leaves(k..l, vec![]).unwrap();
        assert_eq!((below.leaves(), above.leaves()), (0..k, k..l));
        feed(&mut |p| {
            below.absorb(p)?;
            above.absorb(p)
        })
        .unwrap();
        let mut times = Timings::default();
        let mut outputs = below.finish_leaves(&mut times).unwrap();
        outputs.extend(above.finish_leaves(&mut times).unwrap());
        outputs
    }

    /// Moves a random prefix or suffix of `from`'s leaves to `to` (any of
    /// them when `to` owns none), checking the states' count on the way.
    fn hand_over(
        rng: &mut Rng,
        params: &TreeParams,
        message_len: u64,
        from: &mut dyn LeafEngine,
        to: &mut dyn LeafEngine,
    ) {
        let (own, theirs) = (from.leaves(), to.leaves());
        if own.is_empty() {
            return;
        }
        let count = rng.up_to(own.end - own.start);
        let suffix = if theirs.is_empty() {
            rng.coin()
        } else if own.end == theirs.start {
            true
        } else {
            assert_eq!(theirs.end, own.start, "the two engines' ranges meet");
            false
        };
        let moved = if suffix {
            own.end - count..own.end
        } else {
            own.start..own.start + count
        };
        let states = from.take_leaves(moved.clone()).unwrap();
        let holding = leaves_with_blocks(params, message_len);
        let want = holding.clamp(moved.start, moved.end) - moved.start;
        assert_eq!(states.len() as u64, want, "states of {moved:?}");
        to.give_leaves(moved, states).unwrap();
    }

    /// Leaves move both ways between a portable engine and the best SIMD one
    /// at random piece boundaries (the second engine starts mid-stream, with
    /// no leaves); the leaves' outputs and the digest are the reference's.
    #[test]
    #[cfg_attr(
        all(target_arch = "x86_64", not(treehash_test_avx2)),
        ignore = "the CPU that built this test has no AVX2 (build.rs)"
    )]
    fn leaves_handed_over_mid_stream_give_the_reference_digest() {
        #[cfg(target_arch = "x86_64")]
        if platform::avx2_for_test("leaves_handed_over_mid_stream_give_the_reference_digest")
            .is_none()
        {
            return;
        }
        let (portable, simd) = (backend(CpuPath::Portable, 1), backend(CpuPath::Auto, 1));
        let mut times = Timings::default();
        let mut rng = Rng(11);
        for params in cases() {
            let b = params.block_size();
            let most_blocks = 2 * params.leaf_count() + 3;
            let mut lens = sizes(&params);
            if params.leaf_count() >= 16 {
                lens.push(3 << 20);
            }
            for len in lens {
                let file = file(len, len as u64 ^ 0x5eed);
                let message: Vec<u8> = params.prefix().iter().chain(&file).copied().collect();
                for end_with_one_engine in [false, true] {
                    let mut first = portable.begin(&params);
                    let mut second: Option<Box<dyn LeafEngine>> = None;
                    let mut at = 0;
                    loop {
                        if rng.coin() {
                            let other =
                                second.get_or_insert_with(|| simd.begin_at(&params, at as u64));
                            let (from, to) = if rng.coin() {
                                (&mut first, other)
                            } else {
                                (other, &mut first)
                            };
                            hand_over(&mut rng, &params, at as u64, &mut **from, &mut **to);
                        }
                        if at == message.len() {
                            break;
                        }
                        let piece = (1 + rng.up_to(most_blocks) as usize) * b;
                        let piece = &message[at..(at + piece).min(message.len())];
                        first.absorb(Piece::Memory(piece)).unwrap();
                        if let Some(second) = &mut second {
                            second.absorb(Piece::Memory(piece)).unwrap();
                        }
                        at += piece.len();
                    }
                    let case = format!("{}, {len} bytes", params.label());
                    let want = reference::tree_hash(&params, &file);
                    let Some(mut second) = second else {
                        assert_eq!(first.finish(&mut times).unwrap(), want, "{case}");
                        continue;
                    };
                    if end_with_one_engine {
                        let all = 0..params.leaf_count();
                        let theirs = second.leaves();
                        let states = second.take_leaves(theirs.clone()).unwrap();
                        first.give_leaves(theirs, states).unwrap();
                        assert_eq!(first.leaves(), all, "{case}");
                        assert!(second.finish(&mut times).is_err(), "{case}");
                        assert_eq!(first.finish(&mut times).unwrap(), want, "{case}");
                        continue;
                    }
                    let (low, high) = if first.leaves().start <= second.leaves().start {
                        (first, second)
                    } else {
                        (second, first)
                    };
                    let mut outputs = low.finish_leaves(&mut times).unwrap();
                    outputs.extend(high.finish_leaves(&mut times).unwrap());
                    assert_eq!(outputs, reference_leaf_outputs(&params, &file), "{case}");
                    assert_eq!(digest(&params, portable.pool(), outputs), want, "{case}");
                }
            }
        }
    }

    /// Ranges that are not a prefix or suffix, not adjacent, or longer than
    /// the message's leaves are internal errors (bugs), not panics; so is a
    /// digest asked of an engine that owns only some leaves.
    #[test]
    fn broken_hand_overs_are_errors() {
        fn is_bug<T>(result: Result<T, HashError>) -> bool {
            matches!(result, Err(HashError::Internal(_)))
        }
        let params = TreeParams::new(Algorithm::Sha3_256, 2, 4).unwrap();
        let cpu = backend(CpuPath::Portable, 1);
        let mut times = Timings::default();
        let mut engine = cpu.begin_at(&params, 0);
        assert!(is_bug(engine.give_leaves(3..20, vec![])));
        let reversed = |start, end| Range { start, end };
        assert!(is_bug(engine.give_leaves(reversed(4, 2), vec![])));
        assert!(is_bug(engine.give_leaves(0..1, vec![[0; 25]; 2])));
        engine.give_leaves(4..8, vec![]).unwrap();
        assert!(is_bug(engine.give_leaves(9..12, vec![])));
        assert!(is_bug(engine.give_leaves(0..3, vec![])));
        assert!(is_bug(engine.take_leaves(5..7)));
        assert!(is_bug(engine.take_leaves(3..8)));
        assert!(is_bug(engine.take_leaves(reversed(6, 5))));
        engine.give_leaves(8..16, vec![]).unwrap();
        engine.absorb(Piece::Memory(&[1; 1000])).unwrap();
        assert!(engine.take_leaves(14..16).unwrap().is_empty());
        assert_eq!(engine.take_leaves(4..6).unwrap().len(), 2);
        assert_eq!(engine.leaves(), 6..14);
        assert!(is_bug(engine.finish(&mut times)));
    }

    /// Where [`CpuBackend::run_one_piece`] and [`CpuBackend::run_pieces`]
    /// run an input and which threads its engines get: a small input inline
    /// on the calling thread, whatever thread that is; a larger one on the
    /// pool; an input of several pieces on the calling thread, or on a
    /// thread of its own when the caller is a worker of a rayon pool (ours
    /// or another), and never with anything left set afterwards.
    #[test]
    fn inputs_run_inline_on_the_pool_or_off_rayon_workers() {
        let cpu = CpuBackend::new(Some(2), None, CpuPath::Portable).unwrap();
        let thread = || std::thread::current().id();
        let inline = || matches!(cpu.workers(), Workers::Inline);
        let in_pool = || cpu.pool().current_thread_index().is_some();
        let on_rayon = || rayon::current_thread_index().is_some();
        let here = thread();

        let (at, small_inline) = cpu.run_one_piece(INLINE_MAX, || (thread(), inline()));
        assert!(at == here && small_inline);
        assert!(!inline(), "nothing is left set here");

        let (larger_in_pool, larger_inline) =
            cpu.run_one_piece(INLINE_MAX + 1, || (in_pool(), inline()));
        assert!(larger_in_pool && !larger_inline);

        let (at, pieces_inline) = cpu.run_pieces(|| (thread(), inline()));
        assert!(at == here && !pieces_inline);

        // From a worker of another pool, the caller's thread never waits
        // on ours: a small input stays on it, the rest leave it.
        let foreign = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        foreign.install(|| {
            let caller = thread();
            assert!(cpu.run_one_piece(1, || thread() == caller && inline()));
            assert!(cpu.run_one_piece(INLINE_MAX + 1, in_pool));
            assert!(cpu.run_pieces(|| thread() != caller && !on_rayon()));
        });
        // From one of our own workers, several pieces leave it too.
        let left = cpu
            .pool()
            .install(|| cpu.run_pieces(|| !on_rayon() && !inline()));
        assert!(left);
        // Several pieces begun inside an inline input (a progress callback there).
        assert!(cpu.run_one_piece(1, || cpu.run_pieces(|| !inline())));
        assert!(cpu.run_one_piece(1, inline), "and inline again after it");
    }
}
