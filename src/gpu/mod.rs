//! The GPU backend (CUDA through cudarc, loaded at run time): leaves absorbed
//! chunk by chunk as the input streams to the device, parent levels and root
//! reduced on the device, only the digest copied back.
//!
//! Nothing here may panic or abort whatever the driver does: every CUDA call's
//! error becomes a [`GpuError`] with context, and a missing driver or device is
//! reported before any CUDA call is made.

mod chunks;
mod device_input;
mod device_standard;
mod engine;
mod fleet;
pub mod kernels;
/// Measurements of the device for the repository's benchmarks (benches/),
/// built with the `measure` feature only; not part of the library's API.
#[cfg(feature = "measure")]
#[doc(hidden)]
pub mod measure;
mod pipeline;
mod reduce;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use cudarc::driver::{CudaContext, CudaStream, DriverError};

use crate::engine::LeafEngine;
use crate::error::HashError;
use crate::message;
use crate::params::TreeParams;
use crate::timings::{Timings, timed};
use crate::trace::trace;

pub use device_input::{DeviceBytes, KeepCurrentContext};
use engine::GpuMessage;
pub use fleet::{Devices, Fleet, Start};
use kernels::Kernels;
pub use kernels::{KernelSet, LeafKernel};
use pipeline::{GpuLeaves, Slots};

/// Bytes per chunk copied to the device and absorbed by one kernel launch.
pub const DEFAULT_CHUNK_BYTES: usize = 32 << 20;
/// Chunks in flight: one being filled, one copying, one being hashed.
const SLOTS: usize = 3;

/// How a mapped file's bytes reach the device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CopyMode {
    /// CPU threads copy each chunk into pinned buffers, which the GPU reads.
    #[default]
    Staging,
    /// The file is mapped a window at a time, each window is pinned
    /// (cuMemHostRegister, read-only) and the GPU reads it directly. Bytes
    /// that are not a file mapping (`Hasher::hash_bytes`) are staged.
    Register,
}

/// A failure of the GPU backend, with what was being done.
#[derive(Debug, Clone)]
pub struct GpuError(String);

impl GpuError {
    pub fn new(message: impl Into<String>) -> GpuError {
        GpuError(message.into())
    }

    /// The driver's own words, for example `looking for CUDA devices: no
    /// CUDA-capable device is detected (CUDA_ERROR_NO_DEVICE)`.
    pub(crate) fn driver(what: &str, e: DriverError) -> GpuError {
        match e.error_string() {
            Ok(text) => GpuError(format!("{what}: {} ({:?})", text.to_string_lossy(), e.0)),
            Err(_) => GpuError(format!("{what}: {:?}", e.0)),
        }
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

impl GpuInfo {
    /// Its name as an engine sharing an input: `gpu` and the ordinal.
    pub fn engine_name(&self) -> String {
        format!("gpu{}", self.ordinal)
    }
}

/// What every path says when the driver library cannot be loaded.
pub const NO_DRIVER: &str = "no CUDA driver found";

/// True when the CUDA driver library can be loaded (says nothing of devices).
/// Asked once per process: each answer costs a dlopen of libcuda.
pub fn driver_present() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    // SAFETY: only tries to dlopen the library.
    *PRESENT.get_or_init(|| unsafe { cudarc::driver::sys::is_culib_present() })
}

/// One GPU, its kernels and its reusable buffers. Opening it costs driver
/// start-up (each function's kernels are compiled, or loaded from the disk
/// cache, on first use): keep one per process.
pub struct GpuBackend {
    ctx: Arc<CudaContext>,
    compute: Arc<CudaStream>,
    copy: Arc<CudaStream>,
    kernels: Kernels,
    slots: Mutex<Option<Slots>>,
    chunk_bytes: usize,
    info: GpuInfo,
    /// Tests only: every message fails after this many chunks.
    pub(crate) fail_after_chunks: Option<usize>,
}

/// An error unless the driver is there and has a device `ordinal`.
pub(crate) fn check_device(ordinal: usize) -> Result<(), GpuError> {
    if !driver_present() {
        return Err(GpuError::new(NO_DRIVER));
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
    Ok(())
}

impl GpuBackend {
    /// Opens CUDA device `ordinal` (no kernel is compiled yet).
    pub fn open(ordinal: usize, chunk_bytes: Option<usize>) -> Result<GpuBackend, GpuError> {
        guard("starting the GPU", || {
            Self::open_inner(ordinal, chunk_bytes)
        })
    }

    fn open_inner(ordinal: usize, chunk_bytes: Option<usize>) -> Result<GpuBackend, GpuError> {
        let start = Instant::now();
        check_device(ordinal)?;
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
            fail_after_chunks: None,
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

    /// The leaves of one message of about `len_hint` bytes (unknown for a
    /// stream), ready to absorb its pieces, with the leaf kernel given or
    /// else the one for the tree's leaf count; `pool` copies staged chunks.
    pub(crate) fn begin<'a>(
        &'a self,
        params: &'a TreeParams,
        len_hint: Option<u64>,
        mode: CopyMode,
        leaf_kernel: Option<LeafKernel>,
        pool: &'a rayon::ThreadPool,
        times: &mut Timings,
    ) -> Result<Box<dyn LeafEngine + 'a>, HashError> {
        let piece_len = self.piece_len(params);
        // A small input needs only small buffers (cheaper to pin).
        let buffers = match len_hint {
            Some(len) => {
                let message_len = params.prefix().len() as u64 + len;
                (piece_len as u64).min(message_len.next_multiple_of(params.block_size() as u64))
                    as usize
            }
            None => piece_len,
        };
        let owned = 0..params.leaf_count();
        let start = Begin {
            buffers,
            mode,
            leaf_kernel,
            owned,
            message_len: 0,
        };
        self.engine(params, start, pool, times)
    }

    /// An engine that joins a message `message_len` bytes into it, owning no
    /// leaf yet (other engines hand it some). It stages every chunk.
    pub(crate) fn begin_at<'a>(
        &'a self,
        params: &'a TreeParams,
        message_len: u64,
        piece_len: usize,
        leaf_kernel: Option<LeafKernel>,
        pool: &'a rayon::ThreadPool,
        times: &mut Timings,
    ) -> Result<Box<dyn LeafEngine + 'a>, HashError> {
        let buffers = self.buffer_len(piece_len);
        let mode = CopyMode::Staging;
        let start = Begin {
            buffers,
            mode,
            leaf_kernel,
            owned: 0..0,
            message_len,
        };
        self.engine(params, start, pool, times)
    }

    /// The engine `begin` and `begin_at` describe: fresh states for the
    /// leaves it owns, chunk buffers of `start.buffers` bytes.
    fn engine<'a>(
        &'a self,
        params: &'a TreeParams,
        start: Begin,
        pool: &'a rayon::ThreadPool,
        times: &mut Timings,
    ) -> Result<Box<dyn LeafEngine + 'a>, HashError> {
        guard("starting a GPU digest", || {
            let piece_len = self.piece_len(params);
            let slots = timed(&mut times.gpu_init, || self.take_slots(start.buffers))?;
            let (kernels, compile_time) = self.kernels.get(params.algorithm())?;
            times.compile += compile_time;
            let owned = start.owned.end - start.owned.start;
            let kernel = start
                .leaf_kernel
                .unwrap_or_else(|| LeafKernel::for_leaves(owned));
            let leaves = GpuLeaves::new(self, params, kernels, kernel, slots, pool, owned)?;
            Ok(Box::new(GpuMessage {
                leaves,
                kernels,
                params,
                piece_len,
                mode: start.mode,
                forced_kernel: start.leaf_kernel,
                range: start.owned,
                message_len: start.message_len,
            }) as Box<dyn LeafEngine + 'a>)
        })
    }

    /// Starts what a digest with `kernels` (an LI tree's, or a standard
    /// function's chunk kernel) in pieces of `piece_len` bytes will need, so
    /// that it is ready before the first piece: its kernels and the chunk
    /// buffers.
    pub fn prepare(&self, kernels: impl Into<KernelSet>, piece_len: usize) -> Result<(), GpuError> {
        let kernels = kernels.into();
        guard("starting the GPU", || {
            self.kernels.ready(kernels)?;
            let ordinal = self.info.ordinal;
            trace(|| format!("GPU {ordinal}: {kernels} kernels loaded"));
            let slots = self.take_slots(self.buffer_len(piece_len))?;
            self.return_slots(slots);
            Ok(())
        })
    }

    /// The pieces this backend cuts when it begins a message alone.
    fn piece_len(&self, params: &TreeParams) -> usize {
        message::piece_len(params.block_size(), self.chunk_bytes)
    }

    /// Bytes per chunk buffer for pieces of `piece_len` bytes. A piece of
    /// up to two chunks fits one buffer: split in two, it leaves a short
    /// second chunk that costs a whole turn of the ring (measured: 34
    /// against 45 GB/s on 34 MiB pieces, H200 machine). Longer pieces are
    /// cut into chunks, so that the pinned ring stays small.
    fn buffer_len(&self, piece_len: usize) -> usize {
        if piece_len <= 2 * self.chunk_bytes {
            piece_len.max(self.chunk_bytes)
        } else {
            self.chunk_bytes
        }
    }

    /// The ring of chunk buffers, lent to one message: the backend's own
    /// when it is free and large enough, else new ones of `capacity` bytes
    /// each (the time is charged to GPU start-up: it is paid once per
    /// process for inputs of similar size).
    fn take_slots(&self, capacity: usize) -> Result<Slots, GpuError> {
        if let Some(kept) = self.slots.lock().ok().and_then(|mut s| s.take()) {
            if kept.capacity() >= capacity {
                return Ok(kept);
            }
            drop(kept); // unpinned before new buffers are pinned
        }
        Slots::new(self, SLOTS, capacity.max(1))
    }

    /// Takes back the ring lent by [`GpuBackend::take_slots`].
    fn return_slots(&self, slots: Slots) {
        if let Ok(mut kept) = self.slots.lock() {
            *kept = Some(slots);
        }
    }
}

/// What an engine starts with: its chunk buffers' size, how it copies, its
/// leaf kernel if forced, its leaves (fresh) and where in M it starts.
struct Begin {
    buffers: usize,
    mode: CopyMode,
    leaf_kernel: Option<LeafKernel>,
    owned: std::ops::Range<u64>,
    message_len: u64,
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
