//! Measurements of the device itself, for the benchmarks: the pinned
//! host-to-device copy rate (the ceiling of end-to-end hashing) and the leaf
//! and chunk kernels' rates on data already in device memory. Built only with the
//! `measure` feature, which the benchmarks require: it is no part of the
//! library's API.
//!
//! Every function here is safe to call with any arguments: pinned memory is
//! zeroed before safe code can read it, host memory is pinned only as whole
//! pages of a borrowed slice and unpinned before the borrow ends, and a copy
//! still running when a measurement fails is waited for before its buffers
//! are freed.

use std::marker::PhantomData;

use cudarc::driver::{CudaEvent, CudaStream, PinnedHostSlice, PushKernelArg, result, sys};

use crate::params::TreeParams;
use crate::tree::Dealing;

use super::LeafKernel;
use super::kernels::address;
use super::{Context, GpuBackend, GpuError};

fn timing_event(gpu: &GpuBackend) -> Result<CudaEvent, GpuError> {
    gpu.ctx
        .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
        .context("creating an event")
}

/// `bytes` bytes of pinned host memory allocated with `flags`, zeroed: the
/// driver hands it out uninitialised, and safe code may read it.
fn zeroed_pinned(
    gpu: &GpuBackend,
    bytes: usize,
    flags: u32,
) -> Result<PinnedHostSlice<u8>, GpuError> {
    // SAFETY: the memory is uninitialised until the write below, and
    // nothing reads it before.
    let mut pinned = unsafe { gpu.ctx.alloc_pinned_with_flags::<u8>(bytes, flags) }
        .context("allocating pinned memory")?;
    let start = pinned.as_mut_ptr().context("using pinned memory")?;
    // SAFETY: `start` is the first of the `bytes` bytes just allocated,
    // which nothing else holds yet.
    unsafe { std::ptr::write_bytes(start, 0, bytes) };
    Ok(pinned)
}

/// The median of `reps` (at least one) timed host-to-device copies of
/// `bytes` bytes from ordinary pinned memory, in bytes per second.
pub fn pinned_copy_rate(gpu: &GpuBackend, bytes: usize, reps: usize) -> Result<f64, GpuError> {
    let mut host = zeroed_pinned(gpu, bytes, 0)?;
    host.as_mut_slice()
        .context("using pinned memory")?
        .iter_mut()
        .enumerate()
        .for_each(|(i, b)| *b = i as u8);
    // SAFETY: only copies write it, and nothing reads it.
    let device = unsafe { gpu.copy.alloc::<u8>(bytes) }.context("allocating device memory")?;
    let dst = address(&device, &gpu.copy);
    let src = host.as_slice().context("using pinned memory")?;
    let (start, end) = (timing_event(gpu)?, timing_event(gpu)?);
    let mut seconds = Vec::with_capacity(reps + 1);
    let timed = (|| {
        for _ in 0..reps.max(1) + 1 {
            start.record(&gpu.copy).context("recording an event")?;
            // SAFETY: both buffers hold `bytes` bytes, and the copy stream
            // is synchronised below before either is freed.
            unsafe { result::memcpy_htod_async(dst, src, gpu.copy.cu_stream()) }
                .context("copying to the device")?;
            end.record(&gpu.copy).context("recording an event")?;
            let ms = start.elapsed_ms(&end).context("timing a copy")?;
            seconds.push(f64::from(ms) / 1e3);
        }
        Ok::<_, GpuError>(())
    })();
    // A copy queued before a failure must be over before `host` is freed.
    let synced = gpu.copy.synchronize().context("waiting for copies");
    timed?;
    synced?;
    seconds.remove(0); // the warm-up
    Ok(bytes as f64 / median(&mut seconds))
}

/// The median rate, in bytes per second, of the leaf kernel absorbing
/// `bytes` bytes that are already in device memory (one launch per run, all
/// leaves active), over `reps` runs after a warm-up.
pub fn leaf_kernel_rate(
    gpu: &GpuBackend,
    params: &TreeParams,
    kernel: LeafKernel,
    bytes: usize,
    reps: usize,
) -> Result<f64, GpuError> {
    let (kernels, _) = gpu.kernels.get(params.algorithm())?;
    let stream = &gpu.compute;
    let len = bytes - bytes % params.block_size();
    if len == 0 {
        return Err(GpuError::new(
            "measuring the leaf kernel: fewer bytes than a block",
        ));
    }
    let host: Vec<u8> = (0..len)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let data = stream.clone_htod(&host).context("copying test data")?;
    let states = stream
        .alloc_zeros::<u64>(25 * params.leaf_count() as usize)
        .context("allocating leaf states")?;
    let (data_ptr, states_ptr) = (address(&data, stream), address(&states, stream));
    let (start, end) = (timing_event(gpu)?, timing_event(gpu)?);
    let dealing = Dealing::of(params);
    let len = len as u64;
    let mut seconds = Vec::with_capacity(reps + 1);
    for _ in 0..reps.max(1) + 1 {
        start.record(stream).context("recording an event")?;
        // The same first span of M every time, on the same states.
        // SAFETY: `data` holds `len` bytes (an allocation, 8-byte aligned)
        // and `states` 25·L words, both kept until after the compute
        // stream's events below are waited for.
        unsafe { kernels.absorb_span(stream, kernel, dealing, states_ptr, (data_ptr, len), 0) }?;
        end.record(stream).context("recording an event")?;
        let ms = start.elapsed_ms(&end).context("timing the kernel")?;
        seconds.push(f64::from(ms) / 1e3);
    }
    seconds.remove(0);
    Ok(len as f64 / median(&mut seconds))
}

/// The median rate, in bytes per second, of the chunk kernel of `spec`
/// hashing `bytes` bytes (rounded down to whole chunks of `chunk_len`)
/// that are already in device memory, one launch per run, the chaining
/// values left on the device, over `reps` runs after a warm-up.
pub fn chunk_kernel_rate(
    gpu: &GpuBackend,
    spec: &crate::sponge::SpongeSpec,
    chunk_len: usize,
    bytes: usize,
    reps: usize,
) -> Result<f64, GpuError> {
    let (kernel, _) = gpu.kernels.chunk_kernel(spec)?;
    let stream = &gpu.compute;
    let count = bytes / chunk_len.max(1);
    if count == 0 {
        return Err(GpuError::new(
            "measuring the chunk kernel: fewer bytes than a chunk",
        ));
    }
    let len = count * chunk_len;
    let host: Vec<u8> = (0..len)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let data = stream.clone_htod(&host).context("copying test data")?;
    let values = stream
        .alloc_zeros::<u8>(count * spec.output_len())
        .context("allocating chaining values")?;
    let (data_ptr, values_ptr) = (address(&data, stream), address(&values, stream));
    let (start, end) = (timing_event(gpu)?, timing_event(gpu)?);
    let (chunk_len, count) = (chunk_len as u64, count as u64);
    let mut seconds = Vec::with_capacity(reps + 1);
    for _ in 0..reps.max(1) + 1 {
        start.record(stream).context("recording an event")?;
        let mut launch = stream.launch_builder(&kernel.function);
        launch
            .arg(&data_ptr)
            .arg(&chunk_len)
            .arg(&count)
            .arg(&values_ptr);
        // SAFETY: arguments match chunk_values; the buffers hold what it
        // reads and writes.
        unsafe { launch.launch(kernel.launch_config(count)) }
            .context("launching the chunk kernel")?;
        end.record(stream).context("recording an event")?;
        let ms = start.elapsed_ms(&end).context("timing the kernel")?;
        seconds.push(f64::from(ms) / 1e3);
    }
    seconds.remove(0);
    Ok(len as f64 / median(&mut seconds))
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Times, for a span of mapped host memory: pinning it with
/// cuMemHostRegister (read-only; the whole pages that hold it), copying all
/// of it to the device in `transfer`-byte copies, and unpinning it.
pub fn register_copy_unregister(
    gpu: &GpuBackend,
    bytes: &[u8],
    transfer: usize,
) -> Result<[std::time::Duration; 3], GpuError> {
    use std::time::Instant;
    if bytes.is_empty() || transfer == 0 {
        return Err(GpuError::new("measuring registration: nothing to copy"));
    }
    // SAFETY: only copies write it, and nothing reads it.
    let device = unsafe { gpu.copy.alloc::<u8>(transfer) }.context("allocating device memory")?;
    let dst = address(&device, &gpu.copy);
    let start = Instant::now();
    let pinned = Pinned::pin(bytes, &gpu.copy)?;
    let registered = start.elapsed();
    let start = Instant::now();
    for piece in bytes.chunks(transfer) {
        // SAFETY: `piece` lies in the pinned pages, which stay pinned until
        // the copy is over (`copied` is recorded after it); `device` holds
        // `transfer` bytes.
        unsafe { result::memcpy_htod_async(dst, piece, gpu.copy.cu_stream()) }
            .context("copying to the device")?;
        pinned
            .copied
            .record(&gpu.copy)
            .context("recording an event")?;
    }
    gpu.copy.synchronize().context("waiting for copies")?;
    let copied = start.elapsed();
    let start = Instant::now();
    pinned.unpin()?;
    Ok([registered, copied, start.elapsed()])
}

/// The rate, in bytes per second, at which the GPU copies `bytes` (a span of
/// a read-only file mapping, every page read in) straight from the page
/// cache, with no CPU copy: `threads` threads each take windows of `window`
/// bytes (rounded up to whole pages) round-robin, pin one
/// (cuMemHostRegister, read-only), queue its copy on their own CUDA stream,
/// and unpin the window before it once its copy is done. It is what the
/// staging pipeline's three crossings of host memory would become with one.
/// `bytes` must start on a page (a mapping does), so that no two windows
/// share one.
pub fn registered_windows_copy_rate(
    gpu: &GpuBackend,
    bytes: &[u8],
    window: usize,
    threads: usize,
) -> Result<f64, GpuError> {
    let page = crate::input::page_size();
    if !(bytes.as_ptr() as usize).is_multiple_of(page) {
        return Err(GpuError::new(
            "measuring registered windows: the span must start on a page",
        ));
    }
    let window = window.max(1).next_multiple_of(page);
    let threads = threads.max(1);
    let barrier = std::sync::Barrier::new(threads);
    let times = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let barrier = &barrier;
                s.spawn(move || {
                    let setup = (|| {
                        gpu.ctx
                            .bind_to_thread()
                            .context("using the GPU's context")?;
                        let stream = gpu.ctx.new_stream().context("creating a stream")?;
                        // SAFETY: only copies write it, and nothing reads it.
                        let device = unsafe { stream.alloc::<u8>(window) }
                            .context("allocating device memory")?;
                        Ok::<_, GpuError>((stream, device))
                    })();
                    barrier.wait();
                    let (stream, device) = setup?;
                    let dst = address(&device, &stream);
                    let start = std::time::Instant::now();
                    // The window whose copy may still run, unpinned when
                    // dropped (also on an error) once its copy is over.
                    let mut previous: Option<Pinned> = None;
                    for piece in bytes.chunks(window).skip(t).step_by(threads) {
                        let pinned = Pinned::pin(piece, &stream)?;
                        // SAFETY: `piece` is pinned until the copy is over
                        // (`copied` is recorded after it), `device` holds
                        // `window` bytes.
                        unsafe { result::memcpy_htod_async(dst, piece, stream.cu_stream()) }
                            .context("copying to the device")?;
                        pinned
                            .copied
                            .record(&stream)
                            .context("recording an event")?;
                        previous = Some(pinned);
                    }
                    drop(previous);
                    stream.synchronize().context("waiting for copies")?;
                    Ok(start.elapsed())
                })
            })
            .collect();
        join_all(handles)
    })?;
    let slowest = times.into_iter().max().unwrap_or_default();
    Ok(bytes.len() as f64 / slowest.as_secs_f64())
}

/// The whole pages that hold a borrowed slice, pinned read-only for the GPU
/// to copy from (cuMemHostRegister); unpinned when dropped, after the copies
/// queued before `copied` are over. The borrow keeps the pages mapped while
/// they are pinned. Pages that the slice shares with other data are pinned
/// too, which changes nothing of that data (the device only reads the
/// slice), though it makes another registration of them fail until this
/// one is dropped.
struct Pinned<'a> {
    base: *mut std::ffi::c_void,
    copied: CudaEvent,
    bytes: PhantomData<&'a [u8]>,
}

impl<'a> Pinned<'a> {
    fn pin(bytes: &'a [u8], stream: &CudaStream) -> Result<Pinned<'a>, GpuError> {
        let copied = stream
            .context()
            .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
            .context("creating an event")?;
        // Recorded now, so that dropping the pin before a copy is queued
        // waits for nothing.
        copied.record(stream).context("recording an event")?;
        let pages = crate::input::page_span(bytes);
        let base = pages.start as *mut std::ffi::c_void;
        // SAFETY: the pages hold `bytes`, so they are mapped, and stay so
        // while `self` borrows it; the device only reads them (read-only
        // flag), and `Drop` unregisters exactly this base.
        unsafe {
            sys::cuMemHostRegister_v2(
                base,
                pages.end - pages.start,
                sys::CU_MEMHOSTREGISTER_READ_ONLY,
            )
        }
        .result()
        .context("cuMemHostRegister")?;
        Ok(Pinned {
            base,
            copied,
            bytes: PhantomData,
        })
    }

    /// Unpins now, with the unregistration's error if it failed.
    fn unpin(mut self) -> Result<(), GpuError> {
        self.copied.synchronize().context("waiting for copies")?;
        // Null: `Drop` finds nothing left to unpin.
        let base = std::mem::replace(&mut self.base, std::ptr::null_mut());
        // SAFETY: registered by `pin`, not unregistered since; the copies
        // from the pages are over.
        unsafe { sys::cuMemHostUnregister(base) }
            .result()
            .context("cuMemHostUnregister")
    }
}

impl Drop for Pinned<'_> {
    fn drop(&mut self) {
        if self.base.is_null() {
            return;
        }
        // A copy from the pages must be over before they are unpinned.
        let _ = self.copied.synchronize();
        // SAFETY: registered by `pin`, not unregistered since.
        let _ = unsafe { sys::cuMemHostUnregister(self.base) };
    }
}

/// A pinned host buffer of zeros, write-combined or ordinary.
pub fn pinned_buffer(
    gpu: &GpuBackend,
    bytes: usize,
    write_combined: bool,
) -> Result<PinnedHostSlice<u8>, GpuError> {
    let flags = if write_combined {
        sys::CU_MEMHOSTALLOC_WRITECOMBINED
    } else {
        0
    };
    zeroed_pinned(gpu, bytes, flags)
}

/// The rate, in bytes per second, of the GPU's staging pipeline without its
/// kernels: CPU threads read the file at `path` into a ring of `slots`
/// pinned buffers of `transfer` bytes (with the pipeline's own parallel
/// pread) while the copy engine moves the filled ones to the device. It is the
/// host's ceiling for hashing a page-cached file on this GPU.
pub fn staged_copy_rate(
    gpu: &GpuBackend,
    path: &std::path::Path,
    transfer: usize,
    slots: usize,
) -> Result<f64, GpuError> {
    let (total, _) = staged_copy_rate_together(&[gpu], path, transfer, slots)?;
    Ok(total)
}

/// The staging pipeline without kernels on several GPUs at once, as the
/// pipeline runs them when they share an input: the file split into one
/// contiguous part per GPU, each part read and copied by its own thread,
/// the reads of all of them on the one rayon pool. Bytes per second over
/// the whole file, and each GPU's own rate over its part.
pub fn staged_copy_rate_together(
    gpus: &[&GpuBackend],
    path: &std::path::Path,
    transfer: usize,
    slots: usize,
) -> Result<(f64, Vec<f64>), GpuError> {
    let (input, parts) = split_file(path, gpus.len(), transfer)?;
    let barrier = std::sync::Barrier::new(gpus.len());
    let input = &input;
    let times = std::thread::scope(|s| {
        let handles: Vec<_> = gpus
            .iter()
            .zip(&parts)
            .map(|(gpu, part)| {
                let barrier = &barrier;
                s.spawn(move || {
                    let bytes = part.end - part.start;
                    staged_part(gpu, input, part.clone(), transfer, slots, barrier)
                        .map(|t| (bytes, t))
                })
            })
            .collect();
        join_all(handles)
    })?;
    let slowest = times.iter().map(|(_, t)| *t).max().unwrap_or_default();
    let each = times
        .iter()
        .map(|(bytes, t)| *bytes as f64 / t.as_secs_f64())
        .collect();
    Ok((input.len() as f64 / slowest.as_secs_f64(), each))
}

/// [`pinned_copy_rate`] on every GPU of `gpus` at once, each from its own
/// thread: what the host's links move together, in bytes per second, each.
pub fn pinned_copy_rates_together(
    gpus: &[&GpuBackend],
    bytes: usize,
    reps: usize,
) -> Result<Vec<f64>, GpuError> {
    std::thread::scope(|s| {
        let handles: Vec<_> = gpus
            .iter()
            .map(|gpu| {
                s.spawn(move || {
                    gpu.ctx
                        .bind_to_thread()
                        .context("using the GPU's context")?;
                    pinned_copy_rate(gpu, bytes, reps)
                })
            })
            .collect();
        join_all(handles)
    })
}

/// The regular file at `path`, and `parts` contiguous ranges of it that
/// start on multiples of `transfer` (the last ones perhaps empty).
fn split_file(
    path: &std::path::Path,
    parts: usize,
    transfer: usize,
) -> Result<(crate::input::InputFile, Vec<std::ops::Range<u64>>), GpuError> {
    use crate::input::Source;
    let failed =
        |e: &dyn std::fmt::Display| GpuError::new(format!("reading {}: {e}", path.display()));
    let input = match Source::open(path).map_err(|e| failed(&e))? {
        Source::File(input) => input,
        Source::Sequential(_) => return Err(failed(&"not a regular file with bytes")),
    };
    let len = input.len();
    let part_len = len
        .div_ceil(parts.max(1) as u64)
        .next_multiple_of(transfer as u64);
    let ranges = (0..parts as u64)
        .map(|i| (i * part_len).min(len)..((i + 1) * part_len).min(len))
        .collect();
    Ok((input, ranges))
}

/// Every measuring thread's result, or the first error.
fn join_all<T>(
    handles: Vec<std::thread::ScopedJoinHandle<'_, Result<T, GpuError>>>,
) -> Result<Vec<T>, GpuError> {
    handles
        .into_iter()
        .map(|h| {
            h.join()
                .unwrap_or_else(|_| Err(GpuError::new("a measuring thread panicked")))
        })
        .collect()
}

/// A pinned buffer of a staging measurement, and its last copy to the device.
/// Its last copy is waited for before it is freed (also after a failure).
struct Staging {
    pinned: PinnedHostSlice<u8>,
    copied: CudaEvent,
    in_flight: bool,
}

impl Staging {
    fn new(gpu: &GpuBackend, transfer: usize) -> Result<Staging, GpuError> {
        // Write-combined, as the pipeline's own staging buffers are.
        let pinned = zeroed_pinned(gpu, transfer, sys::CU_MEMHOSTALLOC_WRITECOMBINED)?;
        Ok(Staging {
            pinned,
            copied: timing_event(gpu)?,
            in_flight: false,
        })
    }

    /// Once the buffer's last copy is done: `read` fills its first `n`
    /// bytes, which are then copied to device address `dst` on the CUDA
    /// stream `stream`.
    fn fill_and_copy(
        &mut self,
        n: usize,
        read: impl FnOnce(&mut [u8]) -> Result<(), GpuError>,
        dst: u64,
        stream: &CudaStream,
    ) -> Result<(), GpuError> {
        if self.in_flight {
            self.copied.synchronize().context("waiting for a copy")?;
        }
        let buf = &mut self.pinned.as_mut_slice().context("using pinned memory")?[..n];
        read(buf)?;
        // SAFETY: the buffer is not written again before `copied` completes,
        // and the caller's `dst` holds `n` bytes.
        unsafe { result::memcpy_htod_async(dst, &*buf, stream.cu_stream()) }
            .context("copying to the device")?;
        self.copied.record(stream).context("recording an event")?;
        self.in_flight = true;
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if self.in_flight {
            let _ = self.copied.synchronize();
        }
    }
}

/// The error of a read at `at` of the file being measured.
fn read_failed(at: u64) -> impl FnOnce(crate::error::HashError) -> GpuError {
    move |e| GpuError::new(format!("reading the file at {at}: {e}"))
}

/// One GPU's part of [`staged_copy_rate_together`]: its ring is allocated,
/// then every thread starts at the barrier (reached once, even after a
/// failure), and the time to read and copy `part` is returned.
fn staged_part(
    gpu: &GpuBackend,
    input: &crate::input::InputFile,
    part: std::ops::Range<u64>,
    transfer: usize,
    slots: usize,
    barrier: &std::sync::Barrier,
) -> Result<std::time::Duration, GpuError> {
    let ring = (|| {
        gpu.ctx
            .bind_to_thread()
            .context("using the GPU's context")?;
        (0..slots)
            .map(|_| {
                // SAFETY: only copies write it, and nothing reads it.
                let device = unsafe { gpu.copy.alloc::<u8>(transfer) }
                    .context("allocating device memory")?;
                Ok((Staging::new(gpu, transfer)?, device))
            })
            .collect::<Result<Vec<_>, GpuError>>()
    })();
    barrier.wait();
    let mut ring = ring?;
    let start = std::time::Instant::now();
    for (k, at) in part.clone().step_by(transfer).enumerate() {
        let n = (transfer as u64).min(part.end - at) as usize;
        let (staging, device) = &mut ring[k % slots];
        let read = |buf: &mut [u8]| {
            input
                .read_parts_at(vec![(buf, at)])
                .map_err(read_failed(at))
        };
        staging.fill_and_copy(n, read, address(device, &gpu.copy), &gpu.copy)?;
    }
    gpu.copy.synchronize().context("waiting for copies")?;
    Ok(start.elapsed())
}

/// Another shape of staging, without kernels: `readers` threads per GPU,
/// each reading whole transfers of `transfer` bytes (one pread each) into
/// its own two pinned buffers and copying them on its own CUDA stream. With
/// small transfers the buffers stay in the CPU's cache, so a byte crosses
/// memory once (read from the page cache) instead of three times (read,
/// written to a pinned buffer, read by the copy engine). The file is split
/// as in [`staged_copy_rate_together`]; bytes per second in all, and each
/// GPU's.
pub fn reader_staged_copy_rate(
    gpus: &[&GpuBackend],
    path: &std::path::Path,
    transfer: usize,
    readers: usize,
) -> Result<(f64, Vec<f64>), GpuError> {
    let (input, parts) = split_file(path, gpus.len(), transfer)?;
    let barrier = std::sync::Barrier::new(gpus.len() * readers);
    let (input, barrier) = (&input, &barrier);
    let devices = gpus
        .iter()
        // SAFETY: only copies write them, and nothing reads them.
        .map(|gpu| unsafe { gpu.copy.alloc::<u8>(transfer * READER_DEVICE_TRANSFERS) })
        .collect::<Result<Vec<_>, _>>()
        .context("allocating device memory")?;
    let results = std::thread::scope(|s| {
        let mut handles = Vec::new();
        for (g, ((gpu, device), part)) in gpus.iter().zip(&devices).zip(&parts).enumerate() {
            for reader in 0..readers {
                let job = ReaderJob {
                    gpu,
                    input,
                    device,
                    part: part.clone(),
                    transfer,
                    reader,
                    readers,
                };
                handles.push(s.spawn(move || job.run(barrier).map(|(b, t)| (g, b, t))));
            }
        }
        join_all(handles)
    })?;
    let slowest = results.iter().map(|r| r.2).max().unwrap_or_default();
    let each = (0..gpus.len())
        .map(|g| {
            let mine = results.iter().filter(|r| r.0 == g);
            let bytes: u64 = mine.clone().map(|r| r.1).sum();
            let time = mine.map(|r| r.2).max().unwrap_or_default();
            bytes as f64 / time.as_secs_f64()
        })
        .collect();
    Ok((input.len() as f64 / slowest.as_secs_f64(), each))
}

/// Copies land in a device buffer of this many transfers per GPU,
/// round-robin: what they overwrite does not matter here.
const READER_DEVICE_TRANSFERS: usize = 16;

/// One reader thread of [`reader_staged_copy_rate`]: transfers `reader`,
/// `reader + readers`, ... of `part`.
struct ReaderJob<'a> {
    gpu: &'a GpuBackend,
    input: &'a crate::input::InputFile,
    device: &'a cudarc::driver::CudaSlice<u8>,
    part: std::ops::Range<u64>,
    transfer: usize,
    reader: usize,
    readers: usize,
}

impl ReaderJob<'_> {
    /// Sets up, waits at the barrier (reached once, even after a failure),
    /// then reads and copies: the bytes and the time.
    fn run(self, barrier: &std::sync::Barrier) -> Result<(u64, std::time::Duration), GpuError> {
        let (gpu, transfer) = (self.gpu, self.transfer);
        let setup = (|| {
            gpu.ctx
                .bind_to_thread()
                .context("using the GPU's context")?;
            let stream = gpu.ctx.new_stream().context("creating a stream")?;
            let buffers = [Staging::new(gpu, transfer)?, Staging::new(gpu, transfer)?];
            Ok::<_, GpuError>((stream, buffers))
        })();
        barrier.wait();
        let (stream, mut buffers) = setup?;
        let start = std::time::Instant::now();
        let mut bytes = 0u64;
        let part = &self.part;
        let transfers = (part.start..part.end)
            .step_by(transfer)
            .skip(self.reader)
            .step_by(self.readers);
        for (k, at) in transfers.enumerate() {
            let n = (transfer as u64).min(part.end - at) as usize;
            let index = ((at - part.start) / transfer as u64) as usize % READER_DEVICE_TRANSFERS;
            let dst = address(self.device, &stream) + (index * transfer) as u64;
            let read = |buf: &mut [u8]| self.input.read_exact_at(buf, at).map_err(read_failed(at));
            buffers[k % 2].fill_and_copy(n, read, dst, &stream)?;
            bytes += n as u64;
        }
        stream.synchronize().context("waiting for copies")?;
        Ok((bytes, start.elapsed()))
    }
}
