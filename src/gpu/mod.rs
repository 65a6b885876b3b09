//! The GPU backend (CUDA through cudarc, loaded at run time): leaves absorbed
//! chunk by chunk as the input streams to the device, parent levels and root
//! reduced on the device, only the digest copied back.
//!
//! Nothing here may panic or abort whatever the driver does: every CUDA call's
//! error becomes a [`GpuError`] with context, and a missing driver or device is
//! reported before any CUDA call is made.

pub mod kernels;
pub mod measure;
mod pipeline;
mod reduce;

use std::fs::File;
use std::io::Read;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use cudarc::driver::{CudaContext, CudaStream, DriverError};

use crate::error::HashError;
use crate::message::{self, Piece};
use crate::params::TreeParams;
use crate::progress::Progress;
use crate::timings::{Timings, timed};

use kernels::Kernels;
use pipeline::{GpuLeaves, Registration, Slots, Staged};

/// Bytes per chunk copied to the device and absorbed by one kernel launch.
pub const DEFAULT_CHUNK_BYTES: usize = 32 << 20;
/// Chunks in flight: one being filled, one copying, one being hashed.
const SLOTS: usize = 3;
/// Bytes of a mapped file pinned at a time in `CopyMode::Register`.
const REGISTER_WINDOW: usize = 1 << 30;

/// How a mapped file's bytes reach the device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CopyMode {
    /// CPU threads copy each chunk into pinned buffers, which the GPU reads.
    #[default]
    Staging,
    /// The mapping itself is pinned (cuMemHostRegister, read-only), a window
    /// at a time, and the GPU reads it directly.
    Register,
}

/// A failure of the GPU backend, with what was being done.
#[derive(Debug, Clone)]
pub struct GpuError(String);

impl GpuError {
    pub fn new(message: impl Into<String>) -> GpuError {
        GpuError(message.into())
    }

    pub(crate) fn driver(what: &str, e: DriverError) -> GpuError {
        GpuError(format!("{what}: {e}"))
    }
}

impl std::fmt::Display for GpuError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<GpuError> for HashError {
    fn from(e: GpuError) -> HashError {
        HashError::Gpu(e.0)
    }
}

/// Adds context to a CUDA result.
pub(crate) trait Context<T> {
    fn context(self, what: &str) -> Result<T, GpuError>;
}

impl<T> Context<T> for Result<T, DriverError> {
    fn context(self, what: &str) -> Result<T, GpuError> {
        self.map_err(|e| GpuError::driver(what, e))
    }
}

/// What was found and how long starting it took.
#[derive(Clone, Debug)]
pub struct GpuInfo {
    pub ordinal: usize,
    pub name: String,
    /// The architecture the kernels were compiled for, e.g. `sm_90`.
    pub arch: String,
    pub memory_bytes: usize,
    /// Driver initialisation, device count and context creation. (Kernels
    /// are compiled later, per algorithm, and charged to `Timings::compile`.)
    pub init: Duration,
}

/// True when the CUDA driver library can be loaded (says nothing of devices).
/// Asked once per process: each answer costs a dlopen of libcuda.
pub fn driver_present() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    // SAFETY: only tries to dlopen the library.
    *PRESENT.get_or_init(|| unsafe { cudarc::driver::sys::is_culib_present() })
}

/// One GPU, its kernels and its reusable buffers. Opening it costs driver
/// start-up and a kernel compile: keep one per process.
pub struct GpuBackend {
    ctx: Arc<CudaContext>,
    compute: Arc<CudaStream>,
    copy: Arc<CudaStream>,
    kernels: Kernels,
    slots: Mutex<Option<Slots>>,
    chunk_bytes: usize,
    info: GpuInfo,
}

impl GpuBackend {
    /// Opens CUDA device `ordinal` and compiles the kernels for it.
    pub fn open(ordinal: usize, chunk_bytes: Option<usize>) -> Result<GpuBackend, GpuError> {
        guard("starting the GPU", || {
            Self::open_inner(ordinal, chunk_bytes)
        })
    }

    fn open_inner(ordinal: usize, chunk_bytes: Option<usize>) -> Result<GpuBackend, GpuError> {
        let start = Instant::now();
        if !driver_present() {
            return Err(GpuError::new("no CUDA driver found (libcuda.so)"));
        }
        let count = CudaContext::device_count().context("looking for CUDA devices")?;
        if count <= 0 {
            return Err(GpuError::new("no CUDA device found"));
        }
        if ordinal >= count as usize {
            return Err(GpuError::new(format!(
                "there is no CUDA device {ordinal} (devices: 0 to {})",
                count - 1
            )));
        }
        let ctx = CudaContext::new(ordinal).context("creating a CUDA context")?;
        // This backend orders its streams with its own events.
        // SAFETY: called before any allocation in this context.
        unsafe { ctx.disable_event_tracking() };
        let (major, minor) = ctx.compute_capability().context("reading the device")?;
        let name = ctx.name().context("reading the device name")?;
        let memory_bytes = ctx.total_mem().context("reading the device memory")?;
        let compute = ctx.new_stream().context("creating a stream")?;
        let copy = ctx.new_stream().context("creating a stream")?;
        let arch = format!("sm_{major}{minor}");
        let kernels = Kernels::new(ctx.clone(), arch.clone());
        Ok(GpuBackend {
            ctx,
            compute,
            copy,
            kernels,
            slots: Mutex::new(None),
            chunk_bytes: chunk_bytes.unwrap_or(DEFAULT_CHUNK_BYTES),
            info: GpuInfo {
                ordinal,
                name,
                arch,
                memory_bytes,
                init: start.elapsed(),
            },
        })
    }

    pub fn info(&self) -> &GpuInfo {
        &self.info
    }

    /// The digest of `prefix ‖ file`, the file's bytes streamed to the
    /// device. With `backing`, the open file that `file` maps, staged chunks
    /// are read with pread instead of copied from the mapping: that leaves
    /// the mapping untouched, which spares page faults and a slow munmap
    /// (docs/PERFORMANCE.md).
    #[allow(clippy::too_many_arguments)]
    pub fn hash_slice(
        &self,
        params: &TreeParams,
        file: &[u8],
        backing: Option<&File>,
        mode: CopyMode,
        pool: &rayon::ThreadPool,
        progress: &dyn Progress,
        times: &mut Timings,
    ) -> Result<Vec<u8>, HashError> {
        guard("hashing on the GPU", || {
            let piece_len = message::piece_len(params.block_size(), self.chunk_bytes);
            // A small input needs only small buffers (cheaper to pin).
            let message_len = params.prefix().len() + file.len();
            let needed = piece_len.min(message_len.next_multiple_of(params.block_size()));
            let mut slots = timed(&mut times.gpu_init, || self.slots(needed))?;
            let mut leaves =
                GpuLeaves::new(self, params, slots.as_mut().expect("allocated"), times)?;
            let mut window: Option<Registration> = None;
            timed(&mut times.leaves, || {
                message::for_each_piece_of_slice(params, file, piece_len, progress, |piece| {
                    let Piece::Borrowed(bytes) = piece else {
                        return leaves.absorb_staged(Staged::Memory(piece.bytes()), pool);
                    };
                    let offset = bytes.as_ptr() as usize - file.as_ptr() as usize;
                    match (mode, backing) {
                        (CopyMode::Register, _) => {
                            let registered = Registration::covering(
                                &mut window,
                                self,
                                file,
                                bytes,
                                REGISTER_WINDOW,
                            )?;
                            leaves.absorb_registered(bytes, registered)?;
                        }
                        (CopyMode::Staging, Some(backing)) => {
                            let from = Staged::File(backing, offset as u64, bytes.len());
                            leaves.absorb_staged(from, pool)?;
                        }
                        (CopyMode::Staging, None) => {
                            leaves.absorb_staged(Staged::Memory(bytes), pool)?;
                        }
                    }
                    Ok::<(), HashError>(())
                })?;
                leaves.wait_absorbed()?;
                drop(window.take());
                Ok::<(), HashError>(())
            })?;
            Ok(leaves.finish(times)?)
        })
    }

    /// The digest of `prefix ‖ (all of reader)` and the bytes read; the
    /// stream is read into pinned buffers as the device hashes earlier ones.
    pub fn hash_stream(
        &self,
        params: &TreeParams,
        reader: &mut dyn Read,
        pool: &rayon::ThreadPool,
        progress: &dyn Progress,
        times: &mut Timings,
    ) -> Result<(Vec<u8>, u64), HashError> {
        guard("hashing a stream on the GPU", || {
            let piece_len = message::piece_len(params.block_size(), self.chunk_bytes);
            let mut slots = timed(&mut times.gpu_init, || self.slots(piece_len))?;
            let mut leaves =
                GpuLeaves::new(self, params, slots.as_mut().expect("allocated"), times)?;
            let bytes = timed(&mut times.leaves, || {
                message::for_each_piece_of_stream::<HashError>(
                    params,
                    reader,
                    piece_len,
                    progress,
                    |piece| leaves.absorb_staged(Staged::Memory(piece), pool),
                )
            })?;
            leaves.wait_absorbed()?;
            Ok((leaves.finish(times)?, bytes))
        })
    }

    /// The reusable chunk buffers, (re)allocated when they are missing or
    /// smaller than `capacity` bytes each (the time is charged to GPU
    /// start-up: it is paid once per process for inputs of similar size).
    fn slots(&self, capacity: usize) -> Result<MutexGuard<'_, Option<Slots>>, GpuError> {
        let mut slots = self
            .slots
            .lock()
            .map_err(|_| GpuError::new("an earlier GPU failure left the buffers unusable"))?;
        let capacity = capacity.max(1);
        if slots.as_ref().is_none_or(|s| s.capacity() < capacity) {
            *slots = None;
            *slots = Some(Slots::new(self, SLOTS, capacity)?);
        }
        Ok(slots)
    }
}

/// Runs `f`, turning a panic inside cudarc (a driver symbol missing from an
/// old libcuda, say) into an error instead of a crash.
fn guard<T, E: From<GpuError>>(what: &str, f: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(panic) => {
            let reason = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("unexpected failure in the CUDA bindings");
            Err(GpuError::new(format!("{what}: {reason}")).into())
        }
    }
}
