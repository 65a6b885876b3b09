//! The one place that chooses a backend, and the entry points that hash a
//! file, a byte slice or a reader with it.

use std::fmt;
use std::io::Read;
use std::path::Path;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::cpu::{CpuBackend, CpuPath};
use crate::engine::LeafEngine;
use crate::error::HashError;
use crate::gpu::{self, CopyMode, GpuBackend, GpuError, LeafKernel};
use crate::input::{InputFile, STDIN_NAME, Source};
use crate::message::{self, Piece};
use crate::params::TreeParams;
use crate::progress::{NoProgress, Progress};
use crate::timings::{Timings, timed};

/// `Auto` uses the GPU only for trees with at least this many leaves. At
/// 256 leaves even the warp-per-leaf kernel (16 GB/s on an H200) only ties
/// 16 AVX-512 cores (15 GB/s), and the GPU's start-up decides against it; at
/// 1024 it runs at the copy's speed, 53 GB/s (docs/PERFORMANCE.md).
pub const AUTO_GPU_MIN_LEAVES: u64 = 1024;
/// `Auto` starts the GPU only for a file of at least this many bytes when the
/// CPU has no AVX-512 path: starting the GPU costs a process about 0.3 s, and
/// 16 cores at 4.6 (portable) to 7.8 GB/s (AVX2) against the GPU's 53 GB/s
/// break even at 1.5 to 2.6 GB (docs/PERFORMANCE.md, 2026-11-22).
pub const AUTO_GPU_MIN_BYTES_COLD: u64 = 2 << 30;
/// The same when the CPU has its AVX-512 path: 16 cores at 21 GB/s break
/// even with 0.3 s of start-up plus 53 GB/s at about 10 GB (a whole process
/// on 8 GiB: CPU 0.39 s, GPU 0.52 s).
pub const AUTO_GPU_MIN_BYTES_COLD_SIMD_CPU: u64 = 12 << 30;
/// Once the GPU is running, `Auto` uses it for files of at least this size.
pub const AUTO_GPU_MIN_BYTES_WARM: u64 = 64 << 20;

/// Which backend the caller asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BackendChoice {
    /// The GPU when one is present and the input is worth it, the CPU
    /// otherwise: H ≥ 1 and at least [`AUTO_GPU_MIN_LEAVES`] leaves, and a
    /// file of at least [`AUTO_GPU_MIN_BYTES_COLD`] bytes
    /// ([`AUTO_GPU_MIN_BYTES_COLD_SIMD_CPU`] where the CPU has its AVX-512
    /// path), or [`AUTO_GPU_MIN_BYTES_WARM`] once an earlier input started the
    /// GPU. A stream, whose size is unknown, goes to the GPU only if it is running.
    #[default]
    Auto,
    /// The CPU backend.
    Cpu,
    /// The GPU backend, or an error if there is none.
    Gpu,
}

/// The backend that computed a digest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendUsed {
    Cpu,
    Gpu,
}

impl fmt::Display for BackendUsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BackendUsed::Cpu => "cpu",
            BackendUsed::Gpu => "gpu",
        })
    }
}

/// How a [`Hasher`] is set up.
#[derive(Clone, Debug, Default)]
pub struct HasherOptions {
    pub backend: BackendChoice,
    /// CPU worker threads; `None` means one per core.
    pub threads: Option<usize>,
    /// Bytes of input per piece handed to a backend (per chunk copied to the
    /// GPU); `None` for the tuned default. Small values make tests cross
    /// piece boundaries often; values above [`crate::MAX_PIECE_BYTES`] are
    /// taken as that.
    pub piece_bytes: Option<usize>,
    /// The CUDA device to use.
    pub device: usize,
    /// How a mapped file reaches the GPU.
    pub copy_mode: CopyMode,
    /// The GPU leaf kernel; `None` picks it from the leaf count (tests and
    /// benchmarks force one).
    pub gpu_leaf_kernel: Option<LeafKernel>,
    /// The CPU code path: the best this CPU has (`Auto`), or one forced (for
    /// tests and comparisons; the digests are the same). A path the CPU
    /// lacks makes [`Hasher::new`] fail.
    pub cpu_path: CpuPath,
}

/// A digest and how it was made.
#[derive(Clone, Debug)]
pub struct HashOutput {
    /// The digest, `params.output_len()` bytes.
    pub digest: Vec<u8>,
    /// Bytes of input hashed (the prefix not counted).
    pub bytes: u64,
    pub backend: BackendUsed,
    pub timings: Timings,
    /// Set once per hasher, on the first digest made on the CPU because
    /// `Auto` found no usable GPU: why.
    pub fallback_note: Option<String>,
}

/// Hashes inputs with the backend the options ask for. Keep one for the
/// whole process: it owns the worker threads and, once started, the GPU.
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
    gpu: OnceLock<Result<GpuBackend, GpuError>>,
    /// The GPU's start-up time has been charged to a digest.
    startup_reported: AtomicBool,
    /// The fallback note has been handed out.
    fallback_reported: AtomicBool,
    /// The GPU failed on an input: `Auto` does not use it again.
    gpu_failed: AtomicBool,
}

/// What `choose` decided for one input.
enum Chosen<'h> {
    Cpu(Option<String>),
    Gpu(&'h GpuBackend),
}

impl Hasher {
    pub fn new(options: HasherOptions) -> Result<Hasher, HashError> {
        let cpu = CpuBackend::new(options.threads, options.piece_bytes, options.cpu_path)?;
        Ok(Hasher {
            options,
            cpu,
            gpu: OnceLock::new(),
            startup_reported: AtomicBool::new(false),
            fallback_reported: AtomicBool::new(false),
            gpu_failed: AtomicBool::new(false),
        })
    }

    /// The GPU, started if it was not: its description, or why there is none.
    pub fn gpu(&self) -> Result<&GpuBackend, HashError> {
        self.gpu
            .get_or_init(|| GpuBackend::open(self.options.device, self.options.piece_bytes))
            .as_ref()
            .map_err(|e| HashError::Gpu(e.to_string()))
    }

    /// The digest of a byte slice.
    pub fn hash_bytes(&self, params: &TreeParams, data: &[u8]) -> Result<HashOutput, HashError> {
        self.hash_input(params, Input::Bytes(data), &NoProgress)
    }

    /// The digest of everything `reader` yields, read in pieces (constant
    /// memory) on a helper thread while earlier pieces are hashed.
    pub fn hash_reader(
        &self,
        params: &TreeParams,
        reader: &mut (dyn Read + Send),
    ) -> Result<HashOutput, HashError> {
        self.hash_input(params, Input::Stream(reader), &NoProgress)
    }

    /// The digest of a file (`-` is standard input, from its current
    /// offset), with `progress` told the bytes done as they are hashed. A
    /// file whose size or modification time changes meanwhile gets an
    /// error, not a digest.
    pub fn hash_path(
        &self,
        params: &TreeParams,
        path: &Path,
        progress: &dyn Progress,
    ) -> Result<HashOutput, HashError> {
        let start = Instant::now();
        let mut open_time = Duration::ZERO;
        let source = timed(&mut open_time, || Source::open(path))?;
        progress.start(source.known_len());
        let mut out = match source {
            Source::File(mut file) => {
                let out = self.hash_input(params, Input::File(&file), progress)?;
                file.check_unchanged()?;
                if path.as_os_str() == STDIN_NAME {
                    file.seek_past()?;
                }
                out
            }
            Source::Stream(mut file) => {
                self.hash_input(params, Input::Stream(&mut file), progress)?
            }
        };
        out.timings.open = open_time;
        out.timings.total = start.elapsed();
        Ok(out)
    }

    /// The digest of one input on the backend `choose` picks. Under `Auto`,
    /// if the GPU fails, an input that can be read again (or a stream it
    /// failed before reading) is redone on the CPU, and `Auto` leaves that GPU
    /// alone for later inputs.
    fn hash_input(
        &self,
        params: &TreeParams,
        mut input: Input<'_>,
        progress: &dyn Progress,
    ) -> Result<HashOutput, HashError> {
        let start = Instant::now();
        let mut timings = Timings::default();
        let ((digest, bytes), backend, note) = match self.choose(params, input.known_len())? {
            Chosen::Gpu(gpu) => {
                self.charge_startup(gpu, &mut timings);
                let first_try = Resumed::new(progress, 0);
                let engine = gpu.begin(
                    params,
                    input.known_len(),
                    self.options.copy_mode,
                    self.options.gpu_leaf_kernel,
                    self.cpu.pool(),
                    &mut timings,
                );
                // Until the engine exists, not a byte of the input was read.
                let read_any = engine.is_ok();
                let result = engine
                    .and_then(|engine| drive(engine, params, &mut input, &first_try, &mut timings));
                match result {
                    Ok(out) => (out, BackendUsed::Gpu, None),
                    Err(HashError::Gpu(e))
                        if self.options.backend == BackendChoice::Auto
                            && (input.can_reread() || !read_any) =>
                    {
                        // Auto does not come back to a GPU that failed.
                        self.gpu_failed.store(true, Ordering::Relaxed);
                        timings = Timings::default();
                        let note = format!("the GPU failed ({e}); hashing on the CPU");
                        // The bar already shows what the GPU got through.
                        let redo = Resumed::new(progress, first_try.done());
                        let engine = self.cpu.begin(params);
                        let out = drive(engine, params, &mut input, &redo, &mut timings)?;
                        (out, BackendUsed::Cpu, Some(note))
                    }
                    Err(e) => return Err(e),
                }
            }
            Chosen::Cpu(note) => {
                let engine = self.cpu.begin(params);
                let out = drive(engine, params, &mut input, progress, &mut timings)?;
                (out, BackendUsed::Cpu, note)
            }
        };
        timings.total = start.elapsed();
        Ok(HashOutput {
            digest,
            bytes,
            backend,
            timings,
            fallback_note: note,
        })
    }

    /// The backend for one input of `len` bytes (`None`: a stream).
    fn choose(&self, params: &TreeParams, len: Option<u64>) -> Result<Chosen<'_>, HashError> {
        match self.options.backend {
            BackendChoice::Cpu => Ok(Chosen::Cpu(None)),
            BackendChoice::Gpu => Ok(Chosen::Gpu(self.gpu()?)),
            BackendChoice::Auto => {
                if !gpu::driver_present() {
                    return Ok(Chosen::Cpu(self.fallback_once("no CUDA driver found")));
                }
                let running = self.gpu.get().is_some_and(|g| g.is_ok());
                let cold_minimum = if self.cpu.has_fast_path(params) {
                    AUTO_GPU_MIN_BYTES_COLD_SIMD_CPU
                } else {
                    AUTO_GPU_MIN_BYTES_COLD
                };
                let big_enough = match len {
                    Some(n) if running => n >= AUTO_GPU_MIN_BYTES_WARM,
                    Some(n) => n >= cold_minimum,
                    None => running,
                };
                let worth_it = params.height() > 0
                    && params.leaf_count() >= AUTO_GPU_MIN_LEAVES
                    && big_enough
                    && !self.gpu_failed.load(Ordering::Relaxed);
                if !worth_it {
                    return Ok(Chosen::Cpu(None));
                }
                Ok(match self.gpu() {
                    Ok(gpu) => Chosen::Gpu(gpu),
                    Err(e) => Chosen::Cpu(self.fallback_once(&e.to_string())),
                })
            }
        }
    }

    /// The note for the first CPU digest after `Auto` found no GPU.
    fn fallback_once(&self, reason: &str) -> Option<String> {
        (!self.fallback_reported.swap(true, Ordering::Relaxed))
            .then(|| format!("{reason}; hashing on the CPU"))
    }

    /// Charges the GPU's one-time start-up to the first digest made on it.
    fn charge_startup(&self, gpu: &GpuBackend, timings: &mut Timings) {
        if !self.startup_reported.swap(true, Ordering::Relaxed) {
            timings.gpu_init = gpu.info().init;
        }
    }
}

/// One input, as the input path reads it.
enum Input<'i> {
    Bytes(&'i [u8]),
    File(&'i InputFile),
    Stream(&'i mut (dyn Read + Send)),
}

impl Input<'_> {
    fn known_len(&self) -> Option<u64> {
        match self {
            Input::Bytes(b) => Some(b.len() as u64),
            Input::File(f) => Some(f.len()),
            Input::Stream(_) => None,
        }
    }

    /// True when the input can be hashed again from its start.
    fn can_reread(&self) -> bool {
        !matches!(self, Input::Stream(_))
    }
}

/// Feeds every piece of `input` to `engine`, then finishes it: the digest
/// and the number of input bytes hashed.
fn drive(
    mut engine: Box<dyn LeafEngine + '_>,
    params: &TreeParams,
    input: &mut Input<'_>,
    progress: &dyn Progress,
    times: &mut Timings,
) -> Result<(Vec<u8>, u64), HashError> {
    let (piece_len, access) = (engine.piece_len(), engine.access());
    let absorb = |piece: Piece<'_>| engine.absorb(piece);
    let bytes = timed(&mut times.leaves, || match input {
        Input::Bytes(data) => {
            message::for_each_piece_of_slice(params, data, piece_len, progress, absorb)?;
            Ok(data.len() as u64)
        }
        Input::File(file) => {
            message::for_each_piece_of_file(params, file, piece_len, access, progress, absorb)?;
            Ok(file.len())
        }
        Input::Stream(reader) => {
            let mut absorb = absorb;
            message::for_each_piece_of_stream::<HashError>(
                params,
                *reader,
                piece_len,
                progress,
                |bytes| absorb(Piece::Memory(bytes)),
            )
        }
    })?;
    Ok((engine.finish(times)?, bytes))
}

/// Passes progress on, less the first `skip` bytes: a redo after a failed
/// attempt does not count again what the bar already shows.
struct Resumed<'p> {
    inner: &'p dyn Progress,
    skip: u64,
    done: AtomicU64,
}

impl<'p> Resumed<'p> {
    fn new(inner: &'p dyn Progress, skip: u64) -> Self {
        Resumed {
            inner,
            skip,
            done: AtomicU64::new(0),
        }
    }

    /// Bytes reported so far, skipped ones included.
    fn done(&self) -> u64 {
        self.done.load(Ordering::Relaxed)
    }
}

impl Progress for Resumed<'_> {
    fn advance(&self, bytes: u64) {
        let before = self.done.fetch_add(bytes, Ordering::Relaxed);
        let new = (before + bytes).saturating_sub(self.skip.max(before));
        if new > 0 {
            self.inner.advance(new);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::progress::CountingProgress as Count;

    #[test]
    fn a_redo_counts_only_what_the_first_try_did_not() {
        let bar = Count::default();
        let first = Resumed::new(&bar, 0);
        first.advance(300);
        first.advance(200);
        let redo = Resumed::new(&bar, first.done());
        for _ in 0..10 {
            redo.advance(100);
        }
        assert_eq!(bar.0.into_inner(), 1000);
    }
}
