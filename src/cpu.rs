//! The fast CPU backend: the message absorbed piece by piece on all cores by
//! one of the leaf kernels, then the parent levels reduced.
//!
//! - `platform`: what the CPU can run, detected once, and the one choice of
//!   kernel for given parameters;
//! - `walk`: the walk over the message (which block to which leaf, stripe by
//!   stripe, on which thread), written once for every kernel;
//! - `sponges`: the portable kernel, one scalar sponge per leaf;
//! - `fast_sponge`: the scalar sponge of one core (OpenSSL's assembly Keccak
//!   on x86-64): height 0, the parent levels, the portable leaves;
//! - `lanes`, `keccak_x4`, `keccak_x8`, `keccak_x2`: the lane kernels, four
//!   (AVX2), eight (AVX-512) or two (ARMv8.2 SHA3) neighbouring leaves per
//!   permutation;
//! - `reduce`: the parent levels, empty subtrees computed once per process;
//! - `chunks`: the standard functions' chunks, side by side;
//! - `leaves`: one message's leaves on an engine, behind `LeafEngine`;
//! - `routing`: where an input runs (inline, the pool, off rayon workers);
//! - `path`: the code paths a caller may ask for; `units`: the leaves'
//!   states in memory; `workers`: the engines' loops on the pool or inline.
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
mod keccak_x1;
#[cfg(all(target_arch = "aarch64", target_endian = "little"))]
mod keccak_x2;
#[cfg(target_arch = "x86_64")]
mod keccak_x4;
#[cfg(target_arch = "x86_64")]
mod keccak_x8;
#[cfg(any(
    target_arch = "x86_64",
    all(target_arch = "aarch64", target_endian = "little")
))]
mod lanes;
mod leaves;
/// Measurements of the Keccak kernels alone, for the benchmarks: built
/// with the `measure` feature only; not part of the library's API.
#[cfg(feature = "measure")]
#[doc(hidden)]
pub mod measure;
mod platform;
pub(crate) mod reduce;
mod routing;
mod sponges;
#[cfg(test)]
mod tests;
mod units;
mod walk;
pub(crate) mod workers;

use std::ops::Range;
use std::sync::OnceLock;

use crate::engine::LeafEngine;
use crate::error::HashError;
use crate::message;
use crate::params::TreeParams;
use crate::sponge::{SpongeSpec, with_sponge};

use leaves::{Position, reduce_on};
pub use platform::CpuPath;
use platform::Platform;
pub(crate) use routing::{INLINE_MAX, off_rayon_workers};

/// Bytes handed to the thread pool at a time: large enough that a dispatch
/// costs nothing, small enough for a smooth progress bar
/// (docs/decisions/0003-li-piece-length.md).
const PIECE_TARGET: usize = 32 << 20;
/// Bytes a single sponge (H = 0) hashed alone on one thread reads at a
/// time: its read buffer stays in the core's cache, and it is all the
/// memory the input holds, so that a list of large files at H = 0 hashes
/// one on each core within the list's memory bound (list.rs;
/// docs/decisions/0020-lists-inputs-alone.md).
const ALONE_SPONGE_PIECE: usize = 1 << 20;
/// Bytes a piece of a standard function's file holds when the CPU reads its
/// chunks per task (`schedule::chunks::hash`): nothing of such a piece stays
/// in memory, and the workers wait for each other at the end of each piece,
/// so longer pieces cost nothing and waste less (more tasks per thread per
/// piece). Beyond 128 MiB the gain is within a host's noise
/// (docs/decisions/0005-standard-pieces-read-per-task.md).
const STANDARD_FILE_PIECE_TARGET: usize = 128 << 20;
/// Bytes an LI piece of the pool's engine holds at least for each worker,
/// up to [`POOL_PIECE_MOST`]: the workers wait for each other at the end of
/// every piece, and a piece shared by more workers ends sooner, so the
/// piece grows with them to keep that wait a small part of its time
/// (docs/decisions/0040-li-pieces-grow-with-the-workers.md).
const PIECE_BYTES_PER_WORKER: usize = 2 << 20;
/// The longest piece [`PIECE_BYTES_PER_WORKER`] asks for, reached at 32
/// workers: 128 MiB ran no faster there, and a piece of up to two GPU
/// transfers is one transfer buffer for a GPU that joins the input (longer
/// ones are cut into transfers with a short last one).
const POOL_PIECE_MOST: usize = 2 * PIECE_TARGET;
/// A piece spans at least this many stripes (up to `message::MAX_PIECE`
/// bytes), so that each leaf absorbs several blocks while its state is cached.
const STRIPES_PER_PIECE: u64 = 4;
/// Leaves per thread whose states a piece of `STRIPES_PER_PIECE` stripes
/// serves well. A thread that owns more walks its states once per piece,
/// and its pieces span more stripes. The value is tied to a Xeon's caches:
/// at H = 8 (65,536 leaves) one thread gains from longer pieces, four
/// threads do not (docs/decisions/0004-leaves-cached-per-thread.md).
const LEAVES_CACHED_PER_THREAD: u64 = 16384;
/// The piece where even one stripe is longer than the longest piece (from
/// H = 10 at SHA3-256, D = 4): every leaf then absorbs one block per piece
/// at most, however long the piece, so a long one gains nothing. Half the
/// longest keeps the windows mapped at once (`message::MAPPED_AT_ONCE`: seven
/// at most at this length) within 448 MiB next to the leaves' states, which
/// fill the memory at these heights (3.2 GiB at 2^24 leaves); windows of the
/// longest would take 512 MiB (docs/decisions/0003-li-piece-length.md).
const ONE_BLOCK_PER_LEAF_PIECE: usize = message::MAX_PIECE / 2;

/// rayon's own default number of threads, which its pool would start:
/// `RAYON_NUM_THREADS` when that is a positive number, else one per CPU
/// this process may run on.
fn default_threads() -> usize {
    std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|n| n.parse().ok())
        .filter(|&n: &usize| n > 0)
        .unwrap_or_else(cpus)
}

/// The CPUs this process may run on (its affinity mask and its cgroup's
/// quota). Worker threads beyond them cannot run at once: each one more
/// only adds switching, since rayon's idle workers yield and are woken on
/// every job (docs/decisions/0028-worker-threads-at-most-one-per-cpu.md).
fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The CPU backend: a pool of worker threads and the code path they run.
pub(crate) struct CpuBackend {
    /// Started when first needed: an input hashed inline (one small file)
    /// never needs it, and starting a thread per core takes longer than
    /// hashing such a file (docs/decisions/0007-small-inputs-inline.md;
    /// docs/PERFORMANCE.md, "Start-up").
    pool: OnceLock<rayon::ThreadPool>,
    /// Held while the pool starts.
    starting: std::sync::Mutex<()>,
    threads: usize,
    /// Set by the caller (tests), else chosen per input.
    piece_bytes: Option<usize>,
    platform: Platform,
}

impl CpuBackend {
    /// A backend with `threads` workers (one per core when `None`), at
    /// most one per CPU this process may run on, handed pieces of about
    /// `piece_bytes` (a tuned default when `None`), running `path`; an
    /// error if this CPU lacks what `path` needs.
    pub(crate) fn new(
        threads: Option<usize>,
        piece_bytes: Option<usize>,
        path: CpuPath,
    ) -> Result<Self, HashError> {
        let threads = threads.filter(|&n| n > 0).unwrap_or_else(default_threads);
        Self::with_workers(threads.min(cpus()), piece_bytes, path)
    }

    /// A backend with exactly `threads` workers, more than the CPUs if so
    /// asked: for tests of how work is split among threads.
    #[cfg(test)]
    pub(crate) fn with_exact_threads(
        threads: usize,
        piece_bytes: Option<usize>,
        path: CpuPath,
    ) -> Result<Self, HashError> {
        Self::with_workers(threads, piece_bytes, path)
    }

    fn with_workers(
        threads: usize,
        piece_bytes: Option<usize>,
        path: CpuPath,
    ) -> Result<Self, HashError> {
        let platform = Platform::new(path)?;
        Ok(CpuBackend {
            pool: OnceLock::new(),
            starting: std::sync::Mutex::new(()),
            threads: threads.max(1),
            piece_bytes,
            platform,
        })
    }

    /// The worker threads, started if they were not (fewer than asked where
    /// the system refuses that many): an error where it refuses every one.
    /// Every input that uses the pool starts it here first
    /// ([`CpuBackend::run_one_piece`], [`CpuBackend::run_pieces`]), so
    /// that the refusal is the input's error.
    pub(crate) fn start_pool(&self) -> Result<&rayon::ThreadPool, HashError> {
        if let Some(pool) = self.pool.get() {
            return Ok(pool);
        }
        // One caller starts it; the others wait for its pool.
        let _starting = self.starting.lock();
        if let Some(pool) = self.pool.get() {
            return Ok(pool);
        }
        let pool = crate::threads::start_pool(self.threads)?;
        Ok(self.pool.get_or_init(|| pool))
    }

    /// The worker threads (the GPU backend borrows them to stage transfers).
    ///
    /// # Panics
    ///
    /// Where the pool was not started and the system now refuses every
    /// thread: the paths of an input start it with
    /// [`CpuBackend::start_pool`] before they get here.
    pub(crate) fn pool(&self) -> &rayon::ThreadPool {
        self.start_pool()
            .unwrap_or_else(|e| panic!("{e} (the pool is started before its first use)"))
    }

    /// Whether the pool was started.
    #[cfg(test)]
    pub(crate) fn pool_started(&self) -> bool {
        self.pool.get().is_some()
    }

    /// The number of worker threads (the pool's, once started).
    pub(crate) fn threads(&self) -> usize {
        match self.pool.get() {
            Some(pool) => pool.current_num_threads(),
            None => self.threads,
        }
    }

    /// The root digest from the outputs of the leaves that hold a block, in
    /// leaf order (H ≥ 1), on the worker threads.
    pub(crate) fn reduce_leaf_outputs(&self, params: &TreeParams, outputs: Vec<u8>) -> Vec<u8> {
        let nodes = self.platform.node_kernel();
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
    /// parent levels' kernel, for the subtrees of a part (`crate::parts`).
    pub(crate) fn whole_nodes(&self, params: &TreeParams, children: &[u8], out: &mut [u8]) {
        let workers = self.workers();
        platform::with_kernel!(
            self.platform.node_kernel(),
            |kernel, W| {
                let nodes = lanes::Lanes::<_, W>::for_nodes(kernel, params.algorithm());
                reduce::whole_nodes(params, workers, &nodes, children, out)
            },
            || with_sponge!(params.algorithm(), S => {
                let nodes = sponges::Sponges::<S>::default();
                reduce::whole_nodes(params, workers, &nodes, children, out)
            })
        )
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
        spec: &SpongeSpec,
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

    /// About how many bytes a piece of a standard function's file holds
    /// when the CPU reads its chunks itself (not through mapped windows).
    pub(crate) fn standard_file_piece_target(&self) -> usize {
        self.piece_bytes.unwrap_or(STANDARD_FILE_PIECE_TARGET)
    }

    /// The piece length of an input hashed alone on one thread
    /// ([`CpuBackend::run_alone`]), whose piece buffer is the memory it
    /// holds: [`ALONE_SPONGE_PIECE`] for a single sponge, else as
    /// [`piece_len`](Self::piece_len).
    pub(crate) fn alone_piece_len(&self, params: &TreeParams) -> usize {
        match self.piece_bytes {
            None if params.leaf_count() == 1 => {
                message::piece_len(params.block_size(), ALONE_SPONGE_PIECE)
            }
            _ => self.piece_len(params),
        }
    }

    /// The pieces of an input the pool's engine hashes (a file's, or bytes',
    /// under `cpu` or `auto`, a part's on the CPU, and what a GPU that joins
    /// such an input is given): at least [`PIECE_BYTES_PER_WORKER`] for each
    /// worker up to [`POOL_PIECE_MOST`], else as [`piece_len`](Self::piece_len).
    /// Lists and streams size their choices and buffers by `piece_len`.
    pub(crate) fn pool_piece_len(&self, params: &TreeParams) -> usize {
        let per_worker = PIECE_BYTES_PER_WORKER.saturating_mul(self.threads());
        if per_worker <= PIECE_TARGET {
            return self.piece_len(params);
        }
        // Whole blocks rounded down, not up: a piece of 64 MiB and a few
        // bytes would leave a GPU that joins a last transfer of those bytes.
        let least = per_worker.min(POOL_PIECE_MOST);
        self.tree_piece_len(params, least - least % params.block_size())
    }

    /// The piece length for `params` ([`tree_piece_len`](Self::tree_piece_len)
    /// from [`PIECE_TARGET`]).
    pub(crate) fn piece_len(&self, params: &TreeParams) -> usize {
        self.tree_piece_len(params, PIECE_TARGET)
    }

    /// The piece length for `params`, at least `least` bytes (up to the
    /// longest piece), except where one stripe is longer than the longest
    /// piece: a mapped piece costs nothing to hand out, so it spans a few
    /// stripes, more where each thread owns more leaves than its cache
    /// keeps.
    fn tree_piece_len(&self, params: &TreeParams, least: usize) -> usize {
        let target = self.piece_bytes.unwrap_or_else(|| {
            if params.stripe_len() > message::MAX_PIECE as u64 {
                return ONE_BLOCK_PER_LEAF_PIECE;
            }
            let cached = self.threads() as u64 * LEAVES_CACHED_PER_THREAD;
            let shares = params.leaf_count().div_ceil(cached);
            let stripes = params
                .stripe_len()
                .saturating_mul(STRIPES_PER_PIECE.saturating_mul(shares));
            least.max(stripes.min(message::MAX_PIECE as u64) as usize)
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
        let piece_len = match self.workers() {
            workers::Workers::Inline => self.alone_piece_len(params),
            workers::Workers::Pool(_) => self.pool_piece_len(params),
        };
        let at = Position {
            owned,
            message_len,
            piece_len,
        };
        with_sponge!(params.algorithm(), RustCrypto => {
            platform::with_kernel!(
                self.platform.kernel(params),
                |kernel, W| {
                    let kernel = lanes::Lanes::<_, W>::new(kernel, params);
                    self.leaves::<RustCrypto, _>(params, kernel, at)
                },
                || {
                    let kernel = sponges::Sponges::<RustCrypto>::default();
                    self.leaves::<RustCrypto, _>(params, kernel, at)
                }
            )
        })
    }
}
