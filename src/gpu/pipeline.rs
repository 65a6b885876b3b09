//! Streaming the message to the device: chunks travel through a ring of
//! slots (a pinned host buffer, a device buffer and their events), so that
//! while the GPU hashes chunk k it copies chunk k+1 and the CPU prepares
//! chunk k+2. Two streams: copies on one, kernels on the other, ordered by
//! each slot's events.

use std::ffi::c_void;
use std::fs::File;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use std::time::Duration;

use cudarc::driver::{
    CudaEvent, CudaSlice, CudaStream, DevicePtr, LaunchConfig, PinnedHostSlice, PushKernelArg,
    result, sys,
};
use rayon::prelude::*;

use crate::error::HashError;
use crate::params::TreeParams;
use crate::timings::Timings;

use super::kernels::TreeKernels;
use super::{Context, GpuBackend, GpuError, reduce};

/// Threads per block of every kernel (the kernels are register-heavy).
pub(super) const THREADS_PER_BLOCK: u32 = 128;

/// A launch of `threads` threads, rounded up to whole blocks.
pub(super) fn launch_config(threads: u64) -> LaunchConfig {
    let blocks = threads.div_ceil(u64::from(THREADS_PER_BLOCK)).max(1);
    LaunchConfig {
        grid_dim: (blocks as u32, 1, 1),
        block_dim: (THREADS_PER_BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// The raw device address of a buffer, for kernel arguments.
pub(super) fn address<T>(buffer: &CudaSlice<T>, stream: &CudaStream) -> u64 {
    buffer.device_ptr(stream).0
}

/// One place in the ring: a chunk's pinned copy, its device copy, and the
/// events that say when the copy started and ended and the hashing started
/// and ended (timing events, so that busy times can be reported).
struct Slot {
    pinned: PinnedHostSlice<u8>,
    device: CudaSlice<u8>,
    copy_start: CudaEvent,
    copied: CudaEvent,
    hash_start: CudaEvent,
    hashed: CudaEvent,
    /// Events recorded and not yet waited for.
    in_flight: bool,
}

/// The ring of slots, kept by the backend between inputs.
pub(super) struct Slots {
    ring: Vec<Slot>,
    capacity: usize,
}

impl Slots {
    pub(super) fn new(gpu: &GpuBackend, count: usize, capacity: usize) -> Result<Slots, GpuError> {
        let event = || {
            gpu.ctx
                .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
                .context("creating an event")
        };
        let mut ring = Vec::with_capacity(count);
        for _ in 0..count {
            // SAFETY: both buffers are written before they are read.
            let pinned = unsafe { gpu.ctx.alloc_pinned::<u8>(capacity) }
                .context("allocating pinned host memory")?;
            let device = unsafe { gpu.compute.alloc::<u8>(capacity) }
                .context("allocating a device chunk buffer")?;
            ring.push(Slot {
                pinned,
                device,
                copy_start: event()?,
                copied: event()?,
                hash_start: event()?,
                hashed: event()?,
                in_flight: false,
            });
        }
        gpu.compute
            .synchronize()
            .context("allocating chunk buffers")?;
        Ok(Slots { ring, capacity })
    }

    pub(super) fn capacity(&self) -> usize {
        self.capacity
    }
}

/// Where a staged chunk is copied from.
pub(super) enum Staged<'a> {
    /// Bytes in memory.
    Memory(&'a [u8]),
    /// `len` bytes of an open file from an offset, read with pread.
    File(&'a File, u64, usize),
}

impl Staged<'_> {
    fn len(&self) -> usize {
        match self {
            Staged::Memory(bytes) => bytes.len(),
            Staged::File(_, _, len) => *len,
        }
    }

    /// Fills `dst` (exactly `self.len()` bytes) on the calling thread pool,
    /// a mebibyte per task.
    fn copy_into(&self, dst: &mut [u8]) -> Result<(), HashError> {
        const TASK: usize = 1 << 20;
        match *self {
            Staged::Memory(src) => {
                dst.par_chunks_mut(TASK)
                    .zip(src.par_chunks(TASK))
                    .for_each(|(d, s)| d.copy_from_slice(s));
                Ok(())
            }
            Staged::File(file, offset, _) => {
                dst.par_chunks_mut(TASK).enumerate().try_for_each(|(k, d)| {
                    file.read_exact_at(d, offset + (k * TASK) as u64)
                        .map_err(|e| match e.kind() {
                            std::io::ErrorKind::UnexpectedEof => {
                                HashError::Changed("it shrank while being read".into())
                            }
                            _ => HashError::Io(e),
                        })
                })
            }
        }
    }
}

/// Where a chunk's bytes come from.
enum ChunkSource<'s> {
    /// The first `len` bytes of the slot's pinned buffer.
    Pinned(usize),
    /// Registered host memory.
    Registered(&'s [u8]),
}

/// The leaves of one tree while its message streams in.
pub(super) struct GpuLeaves<'a> {
    gpu: &'a GpuBackend,
    params: &'a TreeParams,
    kernels: &'a TreeKernels,
    slots: &'a mut Slots,
    /// Lane-major leaf states: lane w of leaf j at `w * L + j`.
    states: CudaSlice<u64>,
    chunks: usize,
    /// Bytes of M absorbed so far (a whole number of blocks until the last chunk).
    message_len: u64,
    copy_busy: Duration,
    kernel_busy: Duration,
}

impl<'a> GpuLeaves<'a> {
    pub(super) fn new(
        gpu: &'a GpuBackend,
        params: &'a TreeParams,
        slots: &'a mut Slots,
        times: &mut Timings,
    ) -> Result<Self, GpuError> {
        let (kernels, compile_time) = gpu.kernels.get(params.algorithm())?;
        times.compile += compile_time;
        let words = 25 * params.leaf_count() as usize;
        let states = gpu.compute.alloc_zeros::<u64>(words).map_err(|e| {
            GpuError::driver(
                &format!("allocating {} leaf states", params.leaf_count()),
                e,
            )
        })?;
        Ok(GpuLeaves {
            gpu,
            params,
            kernels,
            slots,
            states,
            chunks: 0,
            message_len: 0,
            copy_busy: Duration::ZERO,
            kernel_busy: Duration::ZERO,
        })
    }

    /// Absorbs a piece that lives only during this call: CPU threads copy
    /// it into the slot's pinned buffer first.
    pub(super) fn absorb_staged(
        &mut self,
        from: Staged<'_>,
        pool: &rayon::ThreadPool,
    ) -> Result<(), HashError> {
        let slot = self.next_slot()?;
        let pinned = slot.pinned.as_mut_slice().context("using pinned memory")?;
        let len = from.len();
        pool.install(|| from.copy_into(&mut pinned[..len]))?;
        Ok(self.enqueue(ChunkSource::Pinned(len))?)
    }

    /// Absorbs a piece of host memory that the driver has pinned; the
    /// registration is released only after the copy stream is synchronised.
    pub(super) fn absorb_registered(
        &mut self,
        piece: &[u8],
        _window: &Registration,
    ) -> Result<(), GpuError> {
        self.next_slot()?;
        self.enqueue(ChunkSource::Registered(piece))
    }

    /// The slot the next chunk goes to, once its previous chunk is hashed.
    fn next_slot(&mut self) -> Result<&mut Slot, GpuError> {
        let index = self.chunks % self.slots.ring.len();
        let slot = &mut self.slots.ring[index];
        retire(slot, &mut self.copy_busy, &mut self.kernel_busy)?;
        Ok(slot)
    }

    /// Copies the next chunk to its slot's device buffer on the copy stream,
    /// then absorbs it on the compute stream once the copy is done.
    fn enqueue(&mut self, source: ChunkSource<'_>) -> Result<(), GpuError> {
        let gpu = self.gpu;
        let index = self.chunks % self.slots.ring.len();
        let slot = &mut self.slots.ring[index];
        let src = match source {
            ChunkSource::Pinned(len) => {
                &slot.pinned.as_slice().context("using pinned memory")?[..len]
            }
            ChunkSource::Registered(bytes) => bytes,
        };
        let len = src.len() as u64;
        let device = address(&slot.device, &gpu.copy);
        slot.copy_start
            .record(&gpu.copy)
            .context("recording an event")?;
        // SAFETY: `src` stays valid and unchanged until `copied` completes:
        // a pinned slot is rewritten only after `retire`, a registered window
        // is released only after the copy stream is synchronised.
        unsafe { result::memcpy_htod_async(device, src, gpu.copy.cu_stream()) }
            .context("copying a chunk to the device")?;
        slot.copied
            .record(&gpu.copy)
            .context("recording an event")?;
        gpu.compute
            .wait(&slot.copied)
            .context("ordering the streams")?;
        slot.hash_start
            .record(&gpu.compute)
            .context("recording an event")?;

        let block_size = self.params.block_size() as u64;
        let leaf_count = self.params.leaf_count();
        let blocks = len.div_ceil(block_size);
        let first_block = self.message_len / block_size;
        let states = address(&self.states, &gpu.compute);
        let mut launch = gpu.compute.launch_builder(&self.kernels.absorb_leaves);
        launch
            .arg(&states)
            .arg(&leaf_count)
            .arg(&device)
            .arg(&len)
            .arg(&first_block)
            .arg(&block_size);
        // SAFETY: the arguments match the kernel's signature; the chunk
        // buffer holds `len` bytes, the states 25·L words.
        unsafe { launch.launch(launch_config(blocks.min(leaf_count))) }
            .context("launching the leaf kernel")?;
        slot.hashed
            .record(&gpu.compute)
            .context("recording an event")?;
        slot.in_flight = true;

        self.chunks += 1;
        self.message_len += len;
        Ok(())
    }

    /// Waits until every chunk enqueued so far is hashed.
    pub(super) fn wait_absorbed(&mut self) -> Result<(), GpuError> {
        for slot in &mut self.slots.ring {
            retire(slot, &mut self.copy_busy, &mut self.kernel_busy)?;
        }
        Ok(())
    }

    /// Pads the leaves and reduces the tree on the device: the digest.
    pub(super) fn finish(mut self, times: &mut Timings) -> Result<Vec<u8>, GpuError> {
        self.wait_absorbed()?;
        times.copy_busy += self.copy_busy;
        times.kernel_busy += self.kernel_busy;
        let start = std::time::Instant::now();
        let digest = reduce::finish_tree(
            self.gpu,
            self.kernels,
            self.params,
            &self.states,
            self.message_len,
        );
        times.reduce += start.elapsed();
        digest
    }
}

impl Drop for GpuLeaves<'_> {
    /// On an error path copies or kernels may still be in flight; the states
    /// must not be freed (and their memory reused) under them.
    fn drop(&mut self) {
        let _ = self.gpu.ctx.synchronize();
    }
}

/// Waits for a slot's last chunk to be hashed and adds its busy times.
fn retire(
    slot: &mut Slot,
    copy_busy: &mut Duration,
    kernel_busy: &mut Duration,
) -> Result<(), GpuError> {
    if !slot.in_flight {
        return Ok(());
    }
    slot.hashed
        .synchronize()
        .context("waiting for the leaf kernel")?;
    let ms = |a: &CudaEvent, b: &CudaEvent| {
        a.elapsed_ms(b)
            .map(|ms| Duration::from_secs_f64(f64::from(ms.max(0.0)) / 1e3))
            .context("timing the GPU")
    };
    *copy_busy += ms(&slot.copy_start, &slot.copied)?;
    *kernel_busy += ms(&slot.hash_start, &slot.hashed)?;
    slot.in_flight = false;
    Ok(())
}

/// A window of a mapped file pinned with cuMemHostRegister (read-only), so
/// that the GPU copies from it directly. Released once every copy is done.
pub(super) struct Registration {
    base: *mut c_void,
    /// The registered offsets of the file.
    range: Range<usize>,
    copy: Arc<CudaStream>,
}

/// The host's page size, to which registrations are aligned.
fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size).unwrap_or(4096)
}

impl Registration {
    /// Makes sure `piece` (a part of `file`) lies in the registered window,
    /// moving the window forward if it does not.
    pub(super) fn covering<'w>(
        window: &'w mut Option<Registration>,
        gpu: &GpuBackend,
        file: &[u8],
        piece: &[u8],
        window_len: usize,
    ) -> Result<&'w Registration, GpuError> {
        let start = piece.as_ptr() as usize - file.as_ptr() as usize;
        let end = start + piece.len();
        if let Some(w) = window.as_ref()
            && w.range.start <= start
            && end <= w.range.end
        {
            return Ok(window.as_ref().expect("checked above"));
        }
        // Release the old window first: its copies must finish before it is unpinned.
        drop(window.take());
        let page = page_size();
        let from = start - start % page;
        // The mapping covers whole pages, so rounding the end up stays inside it.
        let to = (from + window_len)
            .max(end)
            .min(file.len())
            .next_multiple_of(page);
        let base = file.as_ptr().wrapping_add(from) as *mut c_void;
        // SAFETY: [base, base + to - from) lies in the file's read-only mapping,
        // which outlives this registration; the flag matches a read-only mapping.
        unsafe {
            sys::cuMemHostRegister_v2(base, to - from, sys::CU_MEMHOSTREGISTER_READ_ONLY)
                .result()
                .context("pinning the mapped file (cuMemHostRegister)")?;
        }
        Ok(window.insert(Registration {
            base,
            range: from..to,
            copy: gpu.copy.clone(),
        }))
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        // Copies from the window must be over before it is unpinned. An error
        // here leaves the memory pinned until exit; it cannot change a digest.
        let _ = self.copy.synchronize();
        // SAFETY: `base` was registered by `covering` and not yet unregistered.
        let _ = unsafe { sys::cuMemHostUnregister(self.base) };
    }
}
