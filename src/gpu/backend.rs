//! One GPU: its context and CUDA streams, its kernels, and the ring of
//! transfer buffers it lends to one message at a time.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use cudarc::driver::{CudaContext, CudaStream};

use crate::message;
use crate::params::TreeParams;
use crate::trace::trace;

use super::device_standard::SpanBuffers;
use super::info::GpuInfo;
use super::kernel_sets::KernelSet;
use super::kernels::Kernels;
use super::options::DEFAULT_TRANSFER_BYTES;
use super::pipeline::Slots;
use super::{Context, GpuError, check_device, guard};

/// Transfers in flight: one being filled, one copying, one being hashed.
const SLOTS: usize = 3;

/// One GPU, its kernels and its reusable buffers. Opening it costs driver
/// start-up (each function's kernels are compiled, or loaded from the disk
/// cache, on first use): keep one per process.
pub struct GpuBackend {
    pub(super) ctx: Arc<CudaContext>,
    pub(super) compute: Arc<CudaStream>,
    pub(super) copy: Arc<CudaStream>,
    pub(super) kernels: Kernels,
    pub(super) slots: Mutex<Option<Slots>>,
    /// A standard function's buffers of chaining values for data on this
    /// GPU, kept between inputs.
    pub(super) span_buffers: Mutex<Option<SpanBuffers>>,
    pub(super) transfer_bytes: usize,
    pub(super) info: GpuInfo,
    /// Tests only: every message fails after this many transfers.
    pub(crate) fail_after_transfers: Option<usize>,
}

impl GpuBackend {
    /// Opens CUDA device `ordinal` (no kernel is compiled yet).
    pub(crate) fn open(
        ordinal: usize,
        transfer_bytes: Option<usize>,
    ) -> Result<GpuBackend, GpuError> {
        guard("starting the GPU", || {
            Self::open_inner(ordinal, transfer_bytes)
        })
    }

    fn open_inner(ordinal: usize, transfer_bytes: Option<usize>) -> Result<GpuBackend, GpuError> {
        let start = Instant::now();
        check_device(ordinal)?;
        let ctx = CudaContext::new(ordinal).context("creating a CUDA context")?;
        // This backend orders its CUDA streams with its own events.
        // SAFETY: called before any allocation in this context.
        unsafe { ctx.disable_event_tracking() };
        let (major, minor) = ctx.compute_capability().context("reading the device")?;
        let name = ctx.name().context("reading the device name")?;
        let memory_bytes = ctx.total_mem().context("reading the device memory")?;
        let compute = ctx.new_stream().context("creating a CUDA stream")?;
        let copy = ctx.new_stream().context("creating a CUDA stream")?;
        let arch = format!("sm_{major}{minor}");
        let kernels = Kernels::new(ctx.clone(), arch.clone());
        Ok(GpuBackend {
            ctx,
            compute,
            copy,
            kernels,
            slots: Mutex::new(None),
            span_buffers: Mutex::new(None),
            transfer_bytes: transfer_bytes.unwrap_or(DEFAULT_TRANSFER_BYTES),
            fail_after_transfers: None,
            info: GpuInfo {
                ordinal,
                name,
                arch,
                memory_bytes,
                init: start.elapsed(),
            },
        })
    }

    /// The CUDA stream (a `CUstream`) inputs on this GPU are hashed on: the
    /// compute stream.
    pub(crate) fn stream_handle(&self) -> u64 {
        self.compute.cu_stream() as u64
    }

    /// What this GPU is, as found when it started.
    pub fn info(&self) -> &GpuInfo {
        &self.info
    }

    /// Starts what a digest with `kernels` (an LI tree's, or a standard
    /// function's chunk kernel) in pieces of `piece_len` bytes will need, so
    /// that it is ready before the first piece: its kernels and the transfer
    /// buffers.
    pub(crate) fn prepare(
        &self,
        kernels: impl Into<KernelSet>,
        piece_len: usize,
    ) -> Result<(), GpuError> {
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
    pub(super) fn piece_len(&self, params: &TreeParams) -> usize {
        message::piece_len(params.block_size(), self.transfer_bytes)
    }

    /// Bytes per transfer buffer for pieces of `piece_len` bytes. A piece of
    /// up to two transfers fits one buffer: split in two, it leaves a short
    /// second transfer that costs a whole turn of the ring
    /// (docs/decisions/0011-gpu-staging-ring.md). Longer pieces are cut into
    /// transfers, so that the pinned ring stays small.
    pub(super) fn buffer_len(&self, piece_len: usize) -> usize {
        if piece_len <= 2 * self.transfer_bytes {
            piece_len.max(self.transfer_bytes)
        } else {
            self.transfer_bytes
        }
    }

    /// The ring of transfer buffers, lent to one message: the backend's own
    /// when it is free and large enough, else new ones of `capacity` bytes
    /// each (the time is charged to GPU start-up: it is paid once per
    /// process for inputs of similar size).
    pub(super) fn take_slots(&self, capacity: usize) -> Result<Slots, GpuError> {
        if let Some(kept) = self.slots.lock().ok().and_then(|mut s| s.take()) {
            if kept.capacity() >= capacity {
                return Ok(kept);
            }
            drop(kept); // unpinned before new buffers are pinned
        }
        Slots::new(self, SLOTS, capacity.max(1))
    }

    /// Takes back the ring lent by [`GpuBackend::take_slots`].
    pub(super) fn return_slots(&self, slots: Slots) {
        if let Ok(mut kept) = self.slots.lock() {
            *kept = Some(slots);
        }
    }
}
