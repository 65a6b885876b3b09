//! The one place that chooses a backend, and the entry points that hash a
//! file, a byte slice or a reader with it.

use std::fmt;
use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::cpu::{CpuBackend, CpuPath};
use crate::error::HashError;
use crate::gpu::{self, CopyMode, GpuBackend, GpuError};
use crate::input::Source;
use crate::params::TreeParams;
use crate::progress::{NoProgress, Progress};
use crate::timings::{Timings, timed};

/// `Auto` uses the GPU only for trees with at least this many leaves: with
/// fewer, one thread per leaf leaves the GPU so idle that 16 CPU cores are
/// faster (measured: 64 leaves 1.5 GB/s on an H200 against 2.2 on the CPU;
/// 256 leaves 5.8 against 1.7; docs/PERFORMANCE.md).
pub const AUTO_GPU_MIN_LEAVES: u64 = 256;
/// `Auto` starts the GPU only for a file of at least this many bytes when the
/// CPU takes its portable path: starting the GPU costs a process about 0.3 s,
/// in which 16 cores at 2–3 GB/s hash about 1 GB (docs/PERFORMANCE.md).
pub const AUTO_GPU_MIN_BYTES_COLD: u64 = 1 << 30;
/// The same when the CPU has its AVX-512 path (11–16 GB/s on 16 cores): a
/// whole process hashed 4 GiB in 0.30 s on the CPU and 0.49 s on the GPU.
pub const AUTO_GPU_MIN_BYTES_COLD_SIMD_CPU: u64 = 8 << 30;
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
    /// piece boundaries often.
    pub piece_bytes: Option<usize>,
    /// The CUDA device to use.
    pub device: usize,
    /// How a mapped file reaches the GPU.
    pub copy_mode: CopyMode,
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
        self.hash_mapped(params, data, None, &NoProgress)
    }

    /// The digest of everything `reader` yields, read in pieces (constant memory).
    pub fn hash_reader(
        &self,
        params: &TreeParams,
        reader: &mut dyn Read,
    ) -> Result<HashOutput, HashError> {
        self.hash_stream(params, reader, &NoProgress)
    }

    /// The digest of a file (`-` is standard input), mapped when it can be,
    /// with `progress` told the bytes done as they are hashed. A file whose
    /// size or modification time changes meanwhile gets an error, not a digest.
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
            Source::Mapped(file) => {
                let out = self.hash_mapped(params, file.bytes(), Some(file.file()), progress)?;
                file.check_unchanged()?;
                out
            }
            Source::Stream(mut file) => self.hash_stream(params, &mut file, progress)?,
        };
        out.timings.open = open_time;
        out.timings.total = start.elapsed();
        Ok(out)
    }

    /// The digest of bytes that stay in memory for the whole call; `backing`
    /// is the open file they map, if any.
    fn hash_mapped(
        &self,
        params: &TreeParams,
        data: &[u8],
        backing: Option<&File>,
        progress: &dyn Progress,
    ) -> Result<HashOutput, HashError> {
        let start = Instant::now();
        let mut timings = Timings::default();
        let (digest, backend, note) = match self.choose(params, Some(data.len() as u64))? {
            Chosen::Gpu(gpu) => {
                self.charge_startup(gpu, &mut timings);
                let pool = self.cpu.pool();
                let mode = self.options.copy_mode;
                let gpu_result =
                    gpu.hash_slice(params, data, backing, mode, pool, progress, &mut timings);
                match gpu_result {
                    Ok(digest) => (digest, BackendUsed::Gpu, None),
                    // Auto may redo a failed GPU digest on the CPU: the bytes are still here.
                    Err(HashError::Gpu(e)) if self.options.backend == BackendChoice::Auto => {
                        timings = Timings::default();
                        let note = format!("the GPU failed ({e}); hashing on the CPU");
                        let digest = self.cpu.hash_slice(params, data, progress, &mut timings)?;
                        (digest, BackendUsed::Cpu, Some(note))
                    }
                    Err(e) => return Err(e),
                }
            }
            Chosen::Cpu(note) => {
                let digest = self.cpu.hash_slice(params, data, progress, &mut timings)?;
                (digest, BackendUsed::Cpu, note)
            }
        };
        timings.total = start.elapsed();
        Ok(HashOutput {
            digest,
            bytes: data.len() as u64,
            backend,
            timings,
            fallback_note: note,
        })
    }

    /// The digest of a stream, read once.
    fn hash_stream(
        &self,
        params: &TreeParams,
        reader: &mut dyn Read,
        progress: &dyn Progress,
    ) -> Result<HashOutput, HashError> {
        let start = Instant::now();
        let mut timings = Timings::default();
        let ((digest, bytes), backend, note) = match self.choose(params, None)? {
            Chosen::Gpu(gpu) => {
                self.charge_startup(gpu, &mut timings);
                let pool = self.cpu.pool();
                let result = gpu.hash_stream(params, reader, pool, progress, &mut timings)?;
                (result, BackendUsed::Gpu, None)
            }
            Chosen::Cpu(note) => {
                let result = self
                    .cpu
                    .hash_stream(params, reader, progress, &mut timings)?;
                (result, BackendUsed::Cpu, note)
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
                let worth_it =
                    params.height() > 0 && params.leaf_count() >= AUTO_GPU_MIN_LEAVES && big_enough;
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
