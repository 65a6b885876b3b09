//! Every public entry point of [`Hasher`] (a file, a byte slice, a reader,
//! a list, a part, data on a GPU), and the one place that chooses a
//! backend:
//!
//! - this module: the options, the outputs, the `Hasher` and its entry
//!   points, each of which hands its work to the module it belongs to
//!   (`list`, `device`, `engines`; a part's to `crate::parts`);
//! - `list`: many inputs side by side, each on the engines that suit it;
//! - `device`: data already in GPU memory, on the GPU that holds it;
//! - `work`: the two kinds of work an input is (an LI tree's leaves, a
//!   standard function's chunks), each with its scheduler;
//! - `engines`: where one input of either kind runs (CPU, GPUs, both,
//!   alone), and its digest;
//! - `auto`: when GPUs are worth starting (for files, lists and parts of
//!   every function, with every constant of that choice), and the
//!   latecomers, GPUs that join an input under way.

#[cfg(all(test, not(gpu_backend)))]
mod absent_gpu_tests;
mod auto;
#[cfg(gpu_backend)]
mod device;
mod engines;
mod list;
mod work;

pub use list::ListInput;

pub(crate) use auto::Resumed;
use work::{Chunks, Leaves};

use std::fmt;
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::cpu::{CpuBackend, CpuPath};
use crate::error::HashError;
use crate::function::Params;
use crate::gpu::{self, CopyMode, Devices, Fleet, GpuBackend, LeafKernel};
use crate::input::{Source, is_stdin_name};
use crate::message::Input;
use crate::progress::EngineShare;
use crate::progress::Progress;
use crate::timings::{Timings, timed};
use crate::trace;

/// Which backend the caller asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BackendChoice {
    /// The CPU starts at once, and every GPU asked for starts in the
    /// background once the rest of an input would repay its start-up; each
    /// GPU joins when it is ready. An LI tree's GPUs take every leaf from
    /// the CPU, which gets leaves back only while that raises the input's
    /// measured throughput; a standard function's chunks are split by the
    /// engines' measured rates, piece by piece. An input that ends
    /// before a GPU is ready is the CPU's alone. A GPU that fails is left
    /// alone, and the input is redone on the CPU where it can be read again.
    #[default]
    Auto,
    /// The CPU backend.
    Cpu,
    /// The GPUs asked for, started side by side and sharing the work from
    /// the first piece (an LI tree's leaves evenly, a standard function's
    /// chunks by their measured rates): as many as the input has 4 GPU
    /// transfers and one more for (a short input is the first GPU's alone).
    /// An error if one is missing or fails.
    Gpu,
}

/// The backend that computed a digest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendUsed {
    /// The CPU alone.
    Cpu,
    /// GPUs alone.
    Gpu,
    /// The CPU and at least one GPU, each on some of the leaves.
    CpuGpu,
}

impl fmt::Display for BackendUsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BackendUsed::Cpu => "cpu",
            BackendUsed::Gpu => "gpu",
            BackendUsed::CpuGpu => "cpu+gpu",
        })
    }
}

/// How a [`Hasher`] is set up: start from [`HasherOptions::default`] (auto
/// backend, a thread per core, the tuned piece length, every GPU, the best
/// CPU path), then set what differs, through the `with_` methods or the
/// fields. Options may be added, so the struct cannot be written out whole.
///
/// ```
/// use treehash::{BackendChoice, Hasher, HasherOptions};
///
/// let options = HasherOptions::default()
///     .with_backend(BackendChoice::Cpu)
///     .with_threads(Some(2));
/// let hasher = Hasher::new(options)?;
/// # Ok::<(), treehash::HashError>(())
/// ```
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct HasherOptions {
    /// Where inputs are hashed: chosen per input (`Auto`), CPU or GPUs.
    pub backend: BackendChoice,
    /// CPU worker threads; `None` means one per CPU. At most one per CPU
    /// this process may run on is started: more cannot run at once.
    pub threads: Option<usize>,
    /// Bytes of input per piece handed to a backend (per transfer copied to
    /// the GPU); `None` for the tuned default. Small values make tests cross
    /// piece boundaries often; values above
    /// [`HasherOptions::MAX_PIECE_BYTES`] are taken as that.
    pub piece_bytes: Option<usize>,
    /// The CUDA devices to use.
    pub devices: Devices,
    /// How a file's bytes reach the GPUs ([`CopyMode`]).
    pub copy_mode: CopyMode,
    /// The CPU code path: the best this CPU has (`Auto`), or one forced (for
    /// tests and comparisons; the digests are the same). A path the CPU
    /// lacks makes [`Hasher::new`] fail.
    pub cpu_path: CpuPath,
    /// Knobs of tests and benchmarks, no options of a user's.
    pub(crate) testing: TestKnobs,
}

/// What tests and benchmarks force.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TestKnobs {
    /// The GPU leaf kernel; `None` picks it from the leaf count.
    pub(crate) gpu_leaf_kernel: Option<LeafKernel>,
    /// Start every GPU before the first piece and let them all take part
    /// from it (instead of joining when they are ready), under `Auto` and
    /// `Gpu` alike.
    pub(crate) wait_for_gpus: bool,
    /// Every GPU digest fails after this many transfers.
    pub(crate) gpu_fail_after_transfers: Option<usize>,
}

impl HasherOptions {
    /// The largest thread count the command line (`--threads`) and the Python
    /// package (`threads=`) accept; a hasher starts at most one worker per CPU
    /// whatever the count.
    pub const MAX_THREADS: usize = 1024;

    /// The largest piece of input handed to a backend at once; larger
    /// [`HasherOptions::piece_bytes`] are taken as this.
    pub const MAX_PIECE_BYTES: usize = crate::message::MAX_PIECE;

    /// These options with `backend`.
    pub fn with_backend(mut self, backend: BackendChoice) -> Self {
        self.backend = backend;
        self
    }

    /// These options with `threads` CPU worker threads (`None`: one per
    /// CPU; at most one per CPU is started).
    pub fn with_threads(mut self, threads: Option<usize>) -> Self {
        self.threads = threads;
        self
    }

    /// These options with pieces of `piece_bytes` (`None`: the tuned default).
    pub fn with_piece_bytes(mut self, piece_bytes: Option<usize>) -> Self {
        self.piece_bytes = piece_bytes;
        self
    }

    /// These options with the CUDA devices `devices`.
    pub fn with_devices(mut self, devices: Devices) -> Self {
        self.devices = devices;
        self
    }

    /// These options with a file's bytes reaching the GPUs by `copy_mode`.
    pub fn with_copy_mode(mut self, copy_mode: CopyMode) -> Self {
        self.copy_mode = copy_mode;
        self
    }

    /// These options with the CPU code path `cpu_path`.
    pub fn with_cpu_path(mut self, cpu_path: CpuPath) -> Self {
        self.cpu_path = cpu_path;
        self
    }

    // The knobs below are public only because the integration tests and the
    // benchmarks (tests/, benches/) are crates of their own: hidden, and no
    // part of the API.

    /// Tests and benchmarks: the GPU leaf kernel forced (`None`: picked
    /// from the leaf count).
    #[doc(hidden)]
    pub fn with_gpu_leaf_kernel(mut self, kernel: Option<LeafKernel>) -> Self {
        self.testing.gpu_leaf_kernel = kernel;
        self
    }

    /// Tests and benchmarks: every GPU starts before the first piece and
    /// takes part from it.
    #[doc(hidden)]
    pub fn with_wait_for_gpus(mut self, wait: bool) -> Self {
        self.testing.wait_for_gpus = wait;
        self
    }

    /// Tests: every GPU digest fails after this many transfers.
    #[doc(hidden)]
    pub fn with_gpu_fail_after_transfers(mut self, transfers: Option<usize>) -> Self {
        self.testing.gpu_fail_after_transfers = transfers;
        self
    }
}

/// A digest and how it was made.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct HashOutput {
    /// The digest, `params.output_len()` bytes.
    pub digest: Vec<u8>,
    /// Bytes of input hashed (the prefix not counted).
    pub bytes: u64,
    /// The backend that computed it.
    pub backend: BackendUsed,
    /// Where the time went, phase by phase.
    pub timings: Timings,
    /// Each engine's part of the input, in leaf order.
    pub shares: Vec<EngineShare>,
    /// Set when `Auto` redid this input on the CPU because a GPU failed: why.
    pub fallback_note: Option<String>,
}

/// Hashes inputs with the backend the options ask for. Keep one for the
/// whole process: it owns the worker threads and, once started, the GPU.
/// Several threads may hash with it at once, a caller's own rayon
/// `par_iter` included: a small input is hashed on the calling thread, and
/// a worker of another pool never waits on this hasher's pool (where rayon
/// would let it run its own pool's next job meanwhile, and nest).
///
/// ```
/// use treehash::{Algorithm, Hasher, HasherOptions, TreeParams};
/// let hasher = Hasher::new(HasherOptions::default()).unwrap();
/// let params = TreeParams::new(Algorithm::Sha3_256, 0, 4).unwrap();
/// let out = hasher.hash_bytes(&params, b"abc").unwrap();
/// // At height 0 the tree digest is plain SHA3-256.
/// assert_eq!(
///     hex::encode(out.digest),
///     "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532"
/// );
/// ```
pub struct Hasher {
    options: HasherOptions,
    cpu: CpuBackend,
    /// Started on first need, once.
    gpus: Fleet,
    /// The GPU's start-up time has been charged to a digest.
    startup_reported: AtomicBool,
    /// The GPU failed on an input: `Auto` does not use it again.
    gpu_failed: AtomicBool,
    /// `Auto` met an input that a GPU could have shared (more than one leaf).
    shareable_input: AtomicBool,
}

impl Hasher {
    /// A hasher set up as `options` say. The CPU's worker threads start
    /// when the first input needs them (a small input is hashed on the
    /// calling thread alone), fewer than asked where the system refuses
    /// that many; an input whose threads the system refuses altogether
    /// gets [`HashError::Threads`]. No GPU is touched until an input needs
    /// one, or until [`gpu`](Hasher::gpu) or [`gpus`](Hasher::gpus) is
    /// called.
    ///
    /// # Errors
    ///
    /// [`HashError::CpuFeature`] where `options.cpu_path` needs what this
    /// CPU lacks.
    pub fn new(options: HasherOptions) -> Result<Hasher, HashError> {
        trace::trace(|| "a hasher is made".into());
        let cpu = CpuBackend::new(options.threads, options.piece_bytes, options.cpu_path)?;
        let start = gpu::Start {
            transfer_bytes: options.piece_bytes,
            fail_after_transfers: options.testing.gpu_fail_after_transfers,
        };
        let gpus = Fleet::new(options.devices.clone(), start);
        Ok(Hasher {
            options,
            cpu,
            gpus,
            startup_reported: AtomicBool::new(false),
            gpu_failed: AtomicBool::new(false),
            shareable_input: AtomicBool::new(false),
        })
    }

    /// The first GPU asked for, started if it was not (the others are
    /// not): its description, or why there is none.
    pub fn gpu(&self) -> Result<&GpuBackend, HashError> {
        Ok(self.gpus.open_first()?)
    }

    /// Every GPU asked for, started if they were not (side by side: the
    /// first on this thread, each other on a thread of its own), or why
    /// one is missing.
    pub fn gpus(&self) -> Result<Vec<&GpuBackend>, HashError> {
        self.gpus.open_now()
    }

    /// The CPU backend.
    pub(crate) fn cpu(&self) -> &CpuBackend {
        &self.cpu
    }

    /// The options it was made with.
    pub(crate) fn options(&self) -> &HasherOptions {
        &self.options
    }

    /// The GPUs asked for (device inputs pick theirs by ordinal).
    pub(crate) fn fleet(&self) -> &Fleet {
        &self.gpus
    }

    /// Whether a list may give whole inputs to GPUs beside the CPU: under
    /// `Auto`, until a GPU failed.
    pub(crate) fn lists_may_use_gpus(&self) -> bool {
        self.options.backend == BackendChoice::Auto && !self.gpu_failed.load(Ordering::Relaxed)
    }

    /// Tests: whether every GPU is to be ready before any input needs it.
    pub(crate) fn waits_for_gpus(&self) -> bool {
        self.options.testing.wait_for_gpus
    }

    /// Whether inputs that would not fill the engines may be hashed on the
    /// CPU alone, side by side ([`Hasher::hash_list`]): not when only GPUs
    /// are asked for.
    pub(crate) fn hashes_alone(&self) -> bool {
        self.options.backend != BackendChoice::Gpu
    }

    /// The digest of a byte slice.
    pub fn hash_bytes(
        &self,
        params: impl Into<Params>,
        data: &[u8],
    ) -> Result<HashOutput, HashError> {
        let input = Input::Bytes(data);
        self.hash_any(&params.into(), input, &(), Placement::Engines)
    }

    /// The digest of everything `reader` yields, a sequential input: read in
    /// pieces (constant memory) on a helper thread while earlier pieces are
    /// hashed.
    pub fn hash_reader(
        &self,
        params: impl Into<Params>,
        reader: &mut (dyn Read + Send),
    ) -> Result<HashOutput, HashError> {
        let input = Input::Sequential(reader);
        self.hash_any(&params.into(), input, &(), Placement::Engines)
    }

    /// The digest of the file at `path`, with `progress` told the bytes
    /// done as they are hashed. A regular file is hashed from its start; a
    /// pipe, terminal or character device is a sequential input, read in
    /// order to its end.
    ///
    /// # Standard input
    ///
    /// The name `-` means standard input, not a file of that name (write
    /// `./-` for one). Where standard input is a regular file it is hashed
    /// from its current offset and left at its end, as coreutils leave it;
    /// else it is read as a sequential input. A standard input that was
    /// closed when the process started is an error, not an empty input.
    ///
    /// # Errors
    ///
    /// [`HashError::Io`] or [`HashError::ReadAt`] where the input cannot be
    /// opened or read; [`HashError::Changed`] where a file's size or
    /// modification time changes while it is hashed (no digest is given
    /// then); [`HashError::Gpu`] where the GPUs that
    /// [`BackendChoice::Gpu`] asks for are missing or fail.
    pub fn hash_path(
        &self,
        params: impl Into<Params>,
        path: &Path,
        progress: &dyn Progress,
    ) -> Result<HashOutput, HashError> {
        self.hash_path_on(&params.into(), path, progress, Placement::Engines)
    }

    /// Hashes every item of `items` that holds an input, side by side, and
    /// calls `done` with each item's tag and result in the items' order
    /// (its digest or why there is none, or `None` for an item that held no
    /// input), from one thread (the calling thread, unless that is a rayon
    /// worker, which must not wait on this hasher's pool). Items are taken from
    /// `items` only as the hashing gets to them, so a long list costs no
    /// memory. `progress` is told the bytes hashed, from all inputs at once.
    /// If `done` returns an error, no further item is started, and that
    /// error is returned once the inputs under way have ended.
    pub fn hash_list<T: Send, E: Send>(
        &self,
        items: impl IntoIterator<Item = (T, Option<ListInput>), IntoIter: Send>,
        progress: &dyn Progress,
        done: impl FnMut(T, Option<Result<HashOutput, HashError>>) -> Result<(), E> + Send,
    ) -> Result<(), E> {
        self.hash_items(items, progress, done)
    }

    /// Under `Auto`, once its inputs are done: why no GPU took part, if none
    /// did: no driver, no device or a start that failed (this waits for the
    /// GPUs' start in the background to end), or why none was started.
    /// `None` when one was started.
    pub fn why_no_gpu(&self) -> Option<String> {
        self.no_gpu_reason()
    }

    /// The digest of bytes in GPU memory, hashed on the GPU that holds them
    /// (one of the devices this hasher was asked for), with no copy to the
    /// host. The work queued on the CUDA stream `bytes.stream` so far is
    /// waited for on the device, not on the host. The calling thread's
    /// current CUDA context is the same afterwards. Empty input is hashed on
    /// the first GPU.
    ///
    /// At height 0 the whole input is one sponge, absorbed by one warp,
    /// thousands of times slower than a tree's leaves, so large inputs want
    /// H ≥ 6 (docs/decisions/0025-device-input-launches-of-1-gib.md).
    ///
    /// KT and ParallelHash hash their chunks where they lie with the chunk
    /// kernel, and only the chaining values (and KT's first chunk, and the
    /// bytes after the last whole chunk) come to the host, whose last node
    /// takes them. TurboSHAKE, one sequential sponge, is copied to the host
    /// a piece at a time and hashed there (the output says `Cpu`).
    ///
    /// # Safety
    /// `bytes.ptr .. bytes.ptr + bytes.len` must be device memory (or
    /// managed memory) of the device's primary context that stays allocated,
    /// and that nothing writes, until this returns. That the address is
    /// memory the driver knows, in that context, and (where the driver tells
    /// the allocation's range) that its allocation holds the whole range is
    /// checked; that it stays allocated is not. Without the GPU backend
    /// nothing is read, and any `bytes` is sound.
    ///
    /// # Errors
    ///
    /// [`HashError::Gpu`] where the GPU fails, where no GPU holds the
    /// bytes, and always where the GPU backend is not built in (without
    /// the `gpu` feature, or off Linux).
    pub unsafe fn hash_device(
        &self,
        params: impl Into<Params>,
        bytes: gpu::DeviceBytes,
    ) -> Result<HashOutput, HashError> {
        #[cfg(gpu_backend)]
        return device::hash_device(self, &params.into(), bytes);
        #[cfg(not(gpu_backend))]
        {
            let _ = (params, bytes);
            Err(HashError::Gpu(gpu::NO_DRIVER.into()))
        }
    }

    /// [`Hasher::hash_device`] of a cudarc slice or view: the work queued on
    /// its CUDA stream so far is waited for, and the borrow keeps it alive
    /// and unwritten while it is hashed.
    #[cfg(gpu_backend)]
    pub fn hash_device_slice<S: cudarc::driver::DevicePtr<u8>>(
        &self,
        params: impl Into<Params>,
        data: &S,
    ) -> Result<HashOutput, HashError> {
        // Asking for the slice's address binds its context to this thread.
        let _kept = gpu::KeepCurrentContext::new();
        let bytes = gpu::bytes_of(data);
        // SAFETY: the shared borrow of `data` keeps it allocated and
        // unwritten by safe code until this returns.
        unsafe { self.hash_device(params, bytes) }
    }

    /// The CUDA stream (a `CUstream`) on which inputs on GPU `ordinal` are
    /// hashed: a producer that orders its work before it (DLPack's
    /// `__dlpack__(stream=…)`) needs no other wait. Starts the GPU.
    pub fn device_stream(&self, ordinal: usize) -> Result<u64, HashError> {
        // Starting a GPU binds its context to this thread.
        let _kept = gpu::KeepCurrentContext::new();
        let gpu = self.fleet().open_device(ordinal)?;
        Ok(gpu.stream_handle())
    }

    /// [`Hasher::hash_path`] where `placement` says.
    pub(crate) fn hash_path_on(
        &self,
        params: &Params,
        path: &Path,
        progress: &dyn Progress,
        placement: Placement,
    ) -> Result<HashOutput, HashError> {
        let start = Instant::now();
        let mut open_time = Duration::ZERO;
        let source = timed(&mut open_time, || Source::open(path))?;
        progress.start(source.known_len());
        let hash = |input: Input<'_>| self.hash_any(params, input, progress, placement);
        let mut out = match source {
            Source::File(mut file) => {
                let out = hash(Input::File(&file))?;
                file.check_unchanged()?;
                if is_stdin_name(path) {
                    file.seek_past()?;
                }
                out
            }
            Source::Sequential(mut file) => hash(Input::Sequential(&mut file))?,
        };
        out.timings.open = open_time;
        out.timings.total = start.elapsed();
        Ok(out)
    }

    /// The digest of one input with parameters of either kind.
    fn hash_any(
        &self,
        params: &Params,
        input: Input<'_>,
        progress: &dyn Progress,
        placement: Placement,
    ) -> Result<HashOutput, HashError> {
        match params {
            Params::Tree(params) => {
                let leaves = Leaves {
                    hasher: self,
                    params,
                };
                self.hash_work(leaves, input, progress, placement)
            }
            Params::Standard(params) => {
                self.hash_work(Chunks::new(self, params), input, progress, placement)
            }
        }
    }
}

/// Where one input is hashed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Placement {
    /// On the engines the options ask for, sharing the leaves.
    Engines,
    /// On every CPU core, with no GPU: one list's input while the GPUs take
    /// other inputs of it whole.
    Cpu,
    /// On the CPU, on the calling thread alone: one of many inputs hashed
    /// side by side, each of which alone would not fill the engines.
    Alone,
    /// On the GPU of this ordinal alone, ready for the input's algorithm.
    Gpu(usize),
}
