//! The message copied to the device: transfers travel through a ring of
//! slots (a pinned host buffer, a device buffer and their events), so that
//! while the GPU hashes transfer k it copies transfer k+1 and the CPU
//! prepares transfer k+2. Two CUDA streams, the copy stream for the copies
//! and the compute stream for the kernels, ordered by each slot's events.

use std::collections::VecDeque;
use std::ffi::c_void;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cudarc::driver::{CudaEvent, CudaSlice, CudaStream, PinnedHostSlice, result, sys};
use rayon::prelude::*;

use crate::error::HashError;
use crate::input::{InputFile, page_span};
use crate::params::TreeParams;
use crate::tree::Dealing;

use super::LeafKernel;
use super::kernels::{TreeKernels, address};
use super::{Context, CopyMode, GpuBackend, GpuError};

/// One place in the ring: a transfer's pinned copy, its device copy, and the
/// events that say when the copy started and ended and the hashing started
/// and ended (timing events, so that busy times can be reported).
pub(super) struct Slot {
    pinned: PinnedHostSlice<u8>,
    device: CudaSlice<u8>,
    copy_start: CudaEvent,
    copied: CudaEvent,
    hash_start: CudaEvent,
    hashed: CudaEvent,
    /// Events recorded and not yet waited for.
    in_flight: bool,
    /// The chaining values of the chunk kernel's last launch from this
    /// slot, made on first use (LI never needs them).
    values: Option<Values>,
}

/// The output of a chunk kernel's launch: on the device, and the pinned
/// host buffer it is copied back to before the slot's `hashed` event.
pub(super) struct Values {
    pub(super) device: CudaSlice<u8>,
    pub(super) host: PinnedHostSlice<u8>,
}

impl Slot {
    /// Its output buffers, at least `len` bytes each (new ones if the kept
    /// ones are shorter).
    pub(super) fn values(&mut self, gpu: &GpuBackend, len: usize) -> Result<&mut Values, GpuError> {
        if self.values.as_ref().is_none_or(|v| v.device.len() < len) {
            self.values = None; // the old ones freed first
            // SAFETY: the kernel writes every byte that is copied back.
            let device = unsafe { gpu.compute.alloc::<u8>(len.max(1)) }
                .context("allocating a device buffer for chaining values")?;
            // Cached, not write-combined as the transfer buffers are: the
            // host reads these.
            // SAFETY: written by the copy back before it is read.
            let host = unsafe { gpu.ctx.alloc_pinned_with_flags::<u8>(len.max(1), 0) }
                .context("allocating pinned host memory for chaining values")?;
            self.values = Some(Values { device, host });
        }
        Ok(self.values.as_mut().expect("made above"))
    }

    /// Its output buffers, if it has any.
    pub(super) fn kept_values(&self) -> Option<&Values> {
        self.values.as_ref()
    }
}

/// The ring of slots, kept by the backend between inputs, and the read
/// buffers made so far.
#[derive(Default)]
pub(super) struct Slots {
    ring: Vec<Slot>,
    capacity: usize,
    read_buffers: Mutex<VecDeque<ReadBuffer>>,
}

/// The bytes one task reads and copies at a time under
/// [`CopyMode::Readers`]: small enough to stay in the CPU's cache between
/// the read and the copy.
const READ_BUFFER_BYTES: usize = 2 << 20;

/// Under [`CopyMode::Readers`], small pinned memory with a CUDA stream of
/// its own. A task of the CPU pool reads a run of the file into it and
/// queues its copy to the device at once, while the bytes are still in the
/// CPU's cache, so that a byte crosses host memory once (read from the page
/// cache) rather than three times (read, written to a slot, read by the copy
/// engine), as in the host's fastest probe for two GPUs
/// (docs/decisions/0032-gpu-readers-opt-in.md).
struct ReadBuffer {
    pinned: PinnedHostSlice<u8>,
    stream: Arc<CudaStream>,
    copied: CudaEvent,
    /// A copy was queued and not yet waited for.
    in_flight: bool,
}

impl ReadBuffer {
    fn new(gpu: &GpuBackend) -> Result<ReadBuffer, GpuError> {
        // SAFETY: written by a read before any copy reads it.
        let pinned = unsafe { gpu.ctx.alloc_pinned::<u8>(READ_BUFFER_BYTES) }
            .context("allocating pinned host memory")?;
        Ok(ReadBuffer {
            pinned,
            stream: gpu.ctx.new_stream().context("creating a stream")?,
            copied: gpu
                .ctx
                .new_event(Some(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING))
                .context("creating an event")?,
            in_flight: false,
        })
    }

    /// Reads `len` bytes (at most [`READ_BUFFER_BYTES`]) at `offset` of
    /// `input` and queues their copy to device address `dst`, once its last
    /// copy is done.
    fn read_and_copy(
        &mut self,
        input: &InputFile,
        offset: u64,
        len: usize,
        dst: u64,
    ) -> Result<(), HashError> {
        if self.in_flight {
            self.copied.synchronize().context("waiting for a copy")?;
            self.in_flight = false;
        }
        let buf = &mut self.pinned.as_mut_slice().context("using pinned memory")?[..len];
        input.read_exact_at(buf, offset)?;
        // SAFETY: the buffer is not written again before `copied`
        // completes (waited for above, at its next use, or on drop).
        // `dst` is `len` bytes inside a slot's device buffer
        // (`Ring::read_into_device` checks the runs fit), a slot retired
        // first, so no kernel still reads it, and none reads it again before
        // the compute stream has waited, through the copy stream, for
        // `copied`.
        unsafe { result::memcpy_htod_async(dst, &*buf, self.stream.cu_stream()) }
            .context("copying a run to the device")?;
        self.copied
            .record(&self.stream)
            .context("recording an event")?;
        self.in_flight = true;
        Ok(())
    }
}

impl Drop for ReadBuffer {
    fn drop(&mut self) {
        // Its pinned memory is freed only once its copy is over.
        if self.in_flight {
            let _ = self.copied.synchronize();
        }
    }
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
                .context("allocating a device transfer buffer")?;
            ring.push(Slot {
                pinned,
                device,
                copy_start: event()?,
                copied: event()?,
                hash_start: event()?,
                hashed: event()?,
                in_flight: false,
                values: None,
            });
        }
        gpu.compute
            .synchronize()
            .context("allocating transfer buffers")?;
        Ok(Slots {
            ring,
            capacity,
            read_buffers: Mutex::new(VecDeque::new()),
        })
    }

    pub(super) fn capacity(&self) -> usize {
        self.capacity
    }
}

/// Where a staged transfer is copied from: runs of bytes, packed one after
/// the other into the transfer (one run unless the message is shared with other
/// engines, which own the rest of each stripe).
pub(super) enum Staged<'a> {
    /// Runs of bytes in memory.
    Memory(&'a [&'a [u8]]),
    /// Runs of the input file, `(offset, len)`, read with pread.
    File(&'a InputFile, &'a [(u64, usize)]),
}

impl Staged<'_> {
    fn len(&self) -> usize {
        match self {
            Staged::Memory(runs) => runs.iter().map(|r| r.len()).sum(),
            Staged::File(_, runs) => runs.iter().map(|r| r.1).sum(),
        }
    }

    /// Fills `dst` (exactly `self.len()` bytes) on the calling thread pool,
    /// at most a mebibyte per task: many reads in flight for a file on disk.
    fn copy_into(&self, dst: &mut [u8]) -> Result<(), HashError> {
        const TASK: usize = 1 << 20;
        let mut rest = dst;
        match *self {
            Staged::Memory(runs) => {
                let mut jobs = Vec::with_capacity(runs.len());
                for run in runs {
                    let (to, after) = std::mem::take(&mut rest).split_at_mut(run.len());
                    jobs.push((to, *run));
                    rest = after;
                }
                jobs.into_par_iter().for_each(|(to, from)| {
                    to.par_chunks_mut(TASK)
                        .zip(from.par_chunks(TASK))
                        .for_each(|(d, s)| d.copy_from_slice(s));
                });
                Ok(())
            }
            Staged::File(input, runs) => {
                let mut parts = Vec::with_capacity(runs.len());
                for &(offset, len) in runs {
                    let (to, after) = std::mem::take(&mut rest).split_at_mut(len);
                    parts.push((to, offset));
                    rest = after;
                }
                input.read_parts_at(parts)
            }
        }
    }
}

/// Where a transfer's bytes come from.
pub(super) enum TransferSource<'s> {
    /// The first `len` bytes of the slot's pinned buffer.
    Pinned(usize),
    /// Registered host memory.
    Registered(&'s [u8]),
    /// The first `len` bytes of the slot's device buffer, copied there
    /// through read buffers (the copy stream waits for them).
    OnDevice(usize),
}

/// The ring of slots lent to one message by the backend until it is
/// dropped, and the transfers sent through it: transfer k goes through
/// slot k mod the ring's length, so while the GPU hashes transfer k it
/// copies transfer k+1 and the CPU fills transfer k+2. What the kernel does
/// with a transfer is the caller's: the launch is a closure.
pub(super) struct Ring<'a> {
    gpu: &'a GpuBackend,
    slots: Slots,
    pool: &'a rayon::ThreadPool,
    /// A file's runs are read into read buffers and copied straight to the
    /// slot's device buffer ([`CopyMode::Readers`]), not staged in a slot.
    direct_reads: bool,
    /// Transfers enqueued so far.
    transfers: usize,
    copy_busy: Duration,
    kernel_busy: Duration,
}

impl<'a> Ring<'a> {
    pub(super) fn new(
        gpu: &'a GpuBackend,
        slots: Slots,
        pool: &'a rayon::ThreadPool,
        mode: CopyMode,
    ) -> Self {
        Ring {
            gpu,
            slots,
            pool,
            direct_reads: mode == CopyMode::Readers,
            transfers: 0,
            copy_busy: Duration::ZERO,
            kernel_busy: Duration::ZERO,
        }
    }

    pub(super) fn gpu(&self) -> &'a GpuBackend {
        self.gpu
    }

    /// Bytes a transfer may hold.
    pub(super) fn capacity(&self) -> usize {
        self.slots.capacity()
    }

    /// The slot the next transfer goes through.
    pub(super) fn next_index(&self) -> usize {
        self.transfers % self.slots.ring.len()
    }

    /// Slot `index`, to read its chaining values once it is retired.
    pub(super) fn slot_mut(&mut self, index: usize) -> &mut Slot {
        &mut self.slots.ring[index]
    }

    /// Waits for slot `index`'s last transfer to be hashed (if one is in
    /// flight) and adds its busy times.
    pub(super) fn retire(&mut self, index: usize) -> Result<(), GpuError> {
        retire(
            &mut self.slots.ring[index],
            &mut self.copy_busy,
            &mut self.kernel_busy,
        )
    }

    /// Whether slot `index`'s last transfer is hashed (never waits).
    pub(super) fn is_hashed(&self, index: usize) -> Result<bool, GpuError> {
        let slot = &self.slots.ring[index];
        if !slot.in_flight {
            return Ok(true);
        }
        slot.hashed
            .try_is_complete()
            .context("asking whether the GPU is done")
    }

    /// Copies a piece that lives only during this call into the next slot
    /// (on the CPU pool), once that slot's last transfer is hashed: into its
    /// pinned buffer, or a file's runs through read buffers straight to its
    /// device buffer. What [`Ring::enqueue`] then sends.
    pub(super) fn stage(&mut self, from: Staged<'_>) -> Result<TransferSource<'static>, HashError> {
        let pool = self.pool;
        let index = self.next_index();
        self.retire(index)?;
        let len = from.len();
        if let (Staged::File(input, runs), true) = (&from, self.direct_reads) {
            self.read_into_device(index, input, runs)?;
            return Ok(TransferSource::OnDevice(len));
        }
        let slot = &mut self.slots.ring[index];
        let pinned = slot.pinned.as_mut_slice().context("using pinned memory")?;
        pool.install(|| from.copy_into(&mut pinned[..len]))?;
        Ok(TransferSource::Pinned(len))
    }

    /// Reads `runs` of `input` into slot `index`'s device buffer (retired),
    /// packed one after the other, by tasks on the CPU pool (of at most
    /// [`READ_BUFFER_BYTES`] each, through read buffers); the copy stream
    /// then waits for every copy. The slot's `copy_start` is recorded
    /// before the first read: its copy time spans the reads too.
    fn read_into_device(
        &mut self,
        index: usize,
        input: &InputFile,
        runs: &[(u64, usize)],
    ) -> Result<(), HashError> {
        let (gpu, pool) = (self.gpu, self.pool);
        let slot = &self.slots.ring[index];
        let total: usize = runs.iter().map(|r| r.1).sum();
        if total > slot.device.len() {
            return Err(HashError::Internal(format!(
                "{total} bytes of runs for a transfer buffer of {}",
                slot.device.len()
            )));
        }
        let base = address(&slot.device, &gpu.copy);
        slot.copy_start
            .record(&gpu.copy)
            .context("recording an event")?;
        let mut tasks = Vec::new();
        let mut at = 0u64;
        for &(offset, len) in runs {
            for done in (0..len).step_by(READ_BUFFER_BYTES) {
                let n = (len - done).min(READ_BUFFER_BYTES);
                tasks.push((base + at + done as u64, offset + done as u64, n));
            }
            at += len as u64;
        }
        // The oldest buffer first: its copy is the likeliest to be over.
        let buffers = &self.slots.read_buffers;
        let read = |(dst, offset, len): (u64, u64, usize)| -> Result<(), HashError> {
            gpu.ctx
                .bind_to_thread()
                .context("using the GPU's context")?;
            let taken = buffers.lock().ok().and_then(|mut b| b.pop_front());
            let mut buffer = match taken {
                Some(buffer) => buffer,
                None => ReadBuffer::new(gpu)?,
            };
            let result = buffer.read_and_copy(input, offset, len, dst);
            if let Ok(mut b) = buffers.lock() {
                b.push_back(buffer);
            }
            result
        };
        pool.install(|| tasks.into_par_iter().try_for_each(read))?;
        let buffers = buffers
            .lock()
            .map_err(|_| GpuError::new("a task reading for the GPU panicked"))?;
        for buffer in buffers.iter().filter(|b| b.in_flight) {
            gpu.copy
                .wait(&buffer.copied)
                .context("ordering the CUDA streams")?;
        }
        Ok(())
    }

    /// Copies the next transfer to its slot's device buffer on the copy
    /// stream, then, once the copy is done, calls `launch` with the slot,
    /// the transfer's device address and its length to queue the kernels on
    /// the compute stream. A pinned transfer must have been staged first.
    pub(super) fn enqueue(
        &mut self,
        source: TransferSource<'_>,
        launch: impl FnOnce(&mut Slot, u64, u64) -> Result<(), GpuError>,
    ) -> Result<(), GpuError> {
        let gpu = self.gpu;
        if gpu
            .fail_after_transfers
            .is_some_and(|k| self.transfers >= k)
        {
            return Err(GpuError::new(format!(
                "failure injected after {} transfers (a test)",
                self.transfers
            )));
        }
        let index = self.next_index();
        if let TransferSource::Registered(_) = source {
            self.retire(index)?;
        }
        let slot = &mut self.slots.ring[index];
        let device = address(&slot.device, &gpu.copy);
        let src = match source {
            TransferSource::Pinned(len) => {
                &slot.pinned.as_slice().context("using pinned memory")?[..len]
            }
            TransferSource::Registered(bytes) => bytes,
            // Copied through read buffers since `copy_start`.
            TransferSource::OnDevice(_) => &[],
        };
        let len = match source {
            TransferSource::OnDevice(len) => len as u64,
            _ => src.len() as u64,
        };
        if !src.is_empty() {
            slot.copy_start
                .record(&gpu.copy)
                .context("recording an event")?;
            // SAFETY: `src` stays valid and unchanged until `copied`
            // completes: a pinned slot is rewritten only after `retire`, a
            // registration is released only after the copy stream is
            // synchronised.
            unsafe { result::memcpy_htod_async(device, src, gpu.copy.cu_stream()) }
                .context("copying a transfer to the device")?;
        }
        slot.copied
            .record(&gpu.copy)
            .context("recording an event")?;
        gpu.compute
            .wait(&slot.copied)
            .context("ordering the CUDA streams")?;
        slot.hash_start
            .record(&gpu.compute)
            .context("recording an event")?;
        launch(slot, device, len)?;
        slot.hashed
            .record(&gpu.compute)
            .context("recording an event")?;
        slot.in_flight = true;
        self.transfers += 1;
        Ok(())
    }

    /// Waits until every transfer enqueued so far is hashed.
    pub(super) fn wait_all(&mut self) -> Result<(), GpuError> {
        for index in 0..self.slots.ring.len() {
            self.retire(index)?;
        }
        Ok(())
    }

    /// The time the copy engine and the kernels were busy so far.
    pub(super) fn busy(&self) -> (Duration, Duration) {
        (self.copy_busy, self.kernel_busy)
    }

    /// Makes the GPU's context current on the calling thread (the raw driver
    /// calls need it; an engine may be driven from any thread).
    pub(super) fn bind(&self) -> Result<(), GpuError> {
        self.gpu
            .ctx
            .bind_to_thread()
            .context("using the GPU's context")
    }
}

impl Drop for Ring<'_> {
    /// On an error path copies or kernels may still be in flight; the
    /// buffers must not be freed (and their memory reused) under them. The
    /// ring goes back to the backend.
    fn drop(&mut self) {
        if self.gpu.ctx.synchronize().is_ok() {
            self.gpu.return_slots(std::mem::take(&mut self.slots));
        }
    }
}

/// The leaves of one tree while its message comes in through the ring.
pub(super) struct GpuLeaves<'a> {
    ring: Ring<'a>,
    params: &'a TreeParams,
    kernels: &'a TreeKernels,
    leaf_kernel: LeafKernel,
    /// The leaves of the message these states absorb: all of M's, or the
    /// packed blocks of a range of them (see `GpuMessage`).
    leaf_count: u64,
    /// Lane-major leaf states: lane w of leaf j at `w * leaf_count + j`.
    states: CudaSlice<u64>,
    /// Bytes of that message absorbed so far (a whole number of blocks until
    /// the last transfer).
    message_len: u64,
}

impl<'a> GpuLeaves<'a> {
    /// The leaves of a message through `ring` (which goes back to the
    /// backend if the states cannot be had).
    pub(super) fn new(
        ring: Ring<'a>,
        params: &'a TreeParams,
        kernels: &'a TreeKernels,
        leaf_kernel: LeafKernel,
        leaf_count: u64,
    ) -> Result<Self, GpuError> {
        let gpu = ring.gpu();
        Ok(GpuLeaves {
            ring,
            params,
            kernels,
            leaf_kernel,
            leaf_count,
            states: alloc_states(gpu, leaf_count)?,
            message_len: 0,
        })
    }

    pub(super) fn gpu(&self) -> &'a GpuBackend {
        self.ring.gpu()
    }

    /// The leaf states (valid once [`GpuLeaves::wait_absorbed`] returned).
    pub(super) fn states(&self) -> &CudaSlice<u64> {
        &self.states
    }

    /// Bytes of its message absorbed so far.
    pub(super) fn message_len(&self) -> u64 {
        self.message_len
    }

    /// The leaves of its message.
    pub(super) fn leaf_count(&self) -> u64 {
        self.leaf_count
    }

    /// Bytes a transfer may hold.
    pub(super) fn transfer_capacity(&self) -> usize {
        self.ring.capacity()
    }

    /// Absorbs with `kernel` from the next transfer on.
    pub(super) fn set_leaf_kernel(&mut self, kernel: LeafKernel) {
        self.leaf_kernel = kernel;
    }

    /// Makes the GPU's context current on the calling thread (the raw driver
    /// calls below need it; an engine may be driven from any thread).
    pub(super) fn bind(&self) -> Result<(), GpuError> {
        self.ring.bind()
    }

    /// Every leaf's state, lane-major, once every transfer is absorbed.
    pub(super) fn download_states(&mut self) -> Result<Vec<u64>, GpuError> {
        self.wait_absorbed()?;
        let stream = &self.gpu().compute;
        let mut host = vec![0u64; 25 * self.leaf_count as usize];
        if !host.is_empty() {
            stream
                .memcpy_dtoh(&self.states.slice(..host.len()), &mut host)
                .context("copying leaf states back")?;
        }
        stream.synchronize().context("copying leaf states back")?;
        Ok(host)
    }

    /// Starts over on a tree of `leaf_count` leaves of which `message_len`
    /// bytes were absorbed, whose states are `lane_major` (25 words a leaf).
    pub(super) fn upload_states(
        &mut self,
        leaf_count: u64,
        lane_major: &[u64],
        message_len: u64,
    ) -> Result<(), GpuError> {
        self.wait_absorbed()?;
        let mut states = alloc_states(self.gpu(), leaf_count)?;
        if !lane_major.is_empty() {
            let stream = &self.gpu().compute;
            stream
                .memcpy_htod(lane_major, &mut states.slice_mut(..lane_major.len()))
                .context("copying leaf states to the device")?;
            stream
                .synchronize()
                .context("copying leaf states to the device")?;
        }
        (self.states, self.leaf_count, self.message_len) = (states, leaf_count, message_len);
        Ok(())
    }

    /// The time the copy engine and the leaf kernels were busy so far.
    pub(super) fn busy(&self) -> (Duration, Duration) {
        self.ring.busy()
    }

    /// Absorbs a piece that lives only during this call: CPU threads copy
    /// it into the slot first ([`Ring::stage`]).
    pub(super) fn absorb_staged(&mut self, from: Staged<'_>) -> Result<(), HashError> {
        let staged = self.ring.stage(from)?;
        Ok(self.enqueue(staged)?)
    }

    /// Absorbs a piece of a file mapping, pinned for the copy and released
    /// before this returns (the mapping may be unmapped afterwards).
    ///
    /// # Safety
    /// `mapped` must be bytes of a file mapping, as [`Registration::of_mapping`] needs.
    pub(super) unsafe fn absorb_registered(&mut self, mapped: &[u8]) -> Result<(), GpuError> {
        // SAFETY: passed on from the caller.
        let registration = unsafe { Registration::of_mapping(self.gpu(), mapped) }?;
        self.enqueue(TransferSource::Registered(mapped))?;
        drop(registration);
        Ok(())
    }

    /// Sends the next transfer through the ring, the leaf kernel absorbing
    /// it once it is on the device.
    fn enqueue(&mut self, source: TransferSource<'_>) -> Result<(), GpuError> {
        let gpu = self.ring.gpu();
        let dealing = Dealing::new(self.params.block_size() as u64, self.leaf_count);
        let message_len = self.message_len;
        let states = address(&self.states, &gpu.compute);
        let (kernels, leaf_kernel) = (self.kernels, self.leaf_kernel);
        let mut absorbed = 0;
        self.ring.enqueue(source, |_, device, len| {
            // SAFETY: the slot's device buffer (an allocation, so 8-byte
            // aligned) holds the `len` bytes just copied, and is written
            // again only after `retire` has waited for this launch; the
            // states hold 25 words per leaf.
            unsafe {
                kernels.absorb_span(
                    &gpu.compute,
                    leaf_kernel,
                    dealing,
                    states,
                    (device, len),
                    message_len,
                )
            }?;
            absorbed = len;
            Ok(())
        })?;
        self.message_len += absorbed;
        Ok(())
    }

    /// Waits until every transfer enqueued so far is hashed.
    pub(super) fn wait_absorbed(&mut self) -> Result<(), GpuError> {
        self.ring.wait_all()
    }
}

/// Zeroed states for `leaf_count` leaves (at least one word: CUDA
/// allocations are never empty).
fn alloc_states(gpu: &GpuBackend, leaf_count: u64) -> Result<CudaSlice<u64>, GpuError> {
    let words = (25 * leaf_count as usize).max(1);
    gpu.compute
        .alloc_zeros::<u64>(words)
        .map_err(|e| GpuError::driver(&format!("allocating {leaf_count} leaf states"), e))
}

/// Waits for a slot's last transfer to be hashed and adds its busy times.
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

/// The pages of a file mapping pinned with cuMemHostRegister (read-only), so
/// that the GPU copies from them directly. Released once every copy is done.
struct Registration {
    base: *mut c_void,
    copy: Arc<CudaStream>,
}

impl Registration {
    /// Pins the whole pages that hold `mapped`.
    ///
    /// # Safety
    /// `mapped` must be bytes of a read-only file mapping that outlives the
    /// registration ([`crate::message::Piece::Mapped`]): a mapping covers
    /// whole pages, so the span rounded out to pages is mapped memory too.
    /// Heap memory must never be passed: its neighbours are not ours to pin.
    unsafe fn of_mapping(gpu: &GpuBackend, mapped: &[u8]) -> Result<Registration, GpuError> {
        let pages = page_span(mapped);
        let base = pages.start as *mut c_void;
        // SAFETY: these pages lie in pages of a read-only file mapping that
        // outlives this registration (the caller's contract); the flag
        // matches a read-only mapping.
        unsafe {
            sys::cuMemHostRegister_v2(base, pages.len(), sys::CU_MEMHOSTREGISTER_READ_ONLY)
                .result()
                .context("pinning the mapped file (cuMemHostRegister)")?;
        }
        Ok(Registration {
            base,
            copy: gpu.copy.clone(),
        })
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        // Copies from the pages must be over before they are unpinned. An
        // error here leaves the memory pinned until exit; it cannot change a digest.
        let _ = self.copy.synchronize();
        // SAFETY: `base` was registered by `of_mapping` and not yet unregistered.
        let _ = unsafe { sys::cuMemHostUnregister(self.base) };
    }
}
