//! A standard function's input already in GPU memory
//! ([`Hasher::hash_device`](crate::Hasher::hash_device) with
//! [`StandardParams`]): the chunk kernel (kernels/chunks.cu) reads the
//! chunks where they lie, at any address, one launch per span of up to
//! [`LAUNCH_BYTES`], and only their chaining values come back to the host
//! (32 or 64 bytes a chunk), to the last node in order, with KT's first
//! chunk and the message's bytes after its last whole chunk. While the host
//! absorbs one span's values the GPU hashes the next: the last node, one
//! sponge on one core, is what the input waits for
//! (docs/decisions/0043-device-chunks-in-short-spans.md).
//!
//! TurboSHAKE is one sequential sponge, which no GPU can share: its input
//! is copied to the host [`HOST_PIECE_BYTES`] at a time and hashed there.

use std::time::{Duration, Instant};

use cudarc::driver::{CudaEvent, CudaSlice, PinnedHostSlice, PushKernelArg, result};

use crate::cpu::CpuBackend;
use crate::error::HashError;
use crate::hasher::BackendUsed;
use crate::schedule::chunks::{self, Walk};
use crate::sponge::SpongeSpec;
use crate::standard::StandardParams;
use crate::timings::{Timings, ms, timed};
use crate::trace::trace;

use super::DeviceBytes;
use super::device_input::wait_for;
use super::kernels::{ChunkKernel, address};
use super::{Context, GpuBackend, GpuError};

/// The most bytes of chunks one launch (a span) hashes: short, so that the
/// last node starts soon after the first launch and each span's values
/// (512 KiB for KT128) stay in the core's cache while it absorbs them.
const LAUNCH_BYTES: usize = 128 << 20;
/// The most bytes of chaining values one launch writes (ParallelHash with
/// small B writes more values than bytes it reads).
const LAUNCH_VALUES: usize = 8 << 20;
/// Bytes of a TurboSHAKE input copied to the host at a time.
const HOST_PIECE_BYTES: usize = 64 << 20;

/// The digest of `bytes` (on `gpu`) with a standard function, and where it
/// was computed: on the GPU, or on the CPU for TurboSHAKE.
pub(crate) fn hash_standard(
    gpu: &GpuBackend,
    cpu: &CpuBackend,
    params: &StandardParams,
    bytes: &DeviceBytes,
    timings: &mut Timings,
) -> Result<(Vec<u8>, BackendUsed), HashError> {
    gpu.ctx
        .bind_to_thread()
        .context("using the GPU's context")?;
    // First, on the calling thread: a per-thread default CUDA stream is its
    // own.
    if let Some(stream) = bytes.stream {
        wait_for(gpu, stream)?;
    }
    let cx = chunks::Context::new(params, cpu);
    let mut walk = Walk::new(params);
    let Some(spec) = params.standard().chunk_spec() else {
        timed(&mut timings.leaves, || {
            for at in (0..bytes.len).step_by(HOST_PIECE_BYTES) {
                let len = HOST_PIECE_BYTES.min(bytes.len - at);
                walk.piece(&cx, &copy_to_host(gpu, bytes.ptr + at as u64, len)?);
            }
            Ok::<_, GpuError>(())
        })?;
        return Ok((walk.finish(&cx), BackendUsed::Cpu));
    };
    let chunk_len = cx.chunk_len();
    let whole = bytes.len / chunk_len;
    let mut first = 0;
    if walk.wants_first_chunk() && whole > 0 {
        walk.piece(&cx, &copy_to_host(gpu, bytes.ptr, chunk_len)?);
        first = 1;
    }
    if whole > first {
        let (kernel, compile) = gpu.kernels.chunk_kernel(&spec)?;
        timings.compile += compile;
        let from = bytes.ptr + (first * chunk_len) as u64;
        timed(&mut timings.leaves, || {
            let start = Instant::now();
            let spans = Spans::new(gpu, kernel, &spec, chunk_len, whole - first)?;
            trace(|| {
                format!(
                    "device chunks: buffers made in {:.3} ms",
                    ms(start.elapsed())
                )
            });
            spans.run(from, |values| walk.absorb_values(&cx, values))
        })?;
    }
    let at = whole * chunk_len;
    let tail = copy_to_host(gpu, bytes.ptr + at as u64, bytes.len - at)?;
    let digest = timed(&mut timings.reduce, || {
        walk.piece(&cx, &tail);
        walk.finish(&cx)
    });
    Ok((digest, BackendUsed::Gpu))
}

/// `len` bytes of device memory from `ptr`, on the host.
fn copy_to_host(gpu: &GpuBackend, ptr: u64, len: usize) -> Result<Vec<u8>, GpuError> {
    let mut host = vec![0u8; len];
    if len > 0 {
        let stream = &gpu.compute;
        // SAFETY: `ptr` holds `len` readable bytes (the caller's input), and
        // the host buffer is `len` bytes long; the compute stream is
        // synchronised before the buffer is read.
        unsafe { result::memcpy_dtoh_async(&mut host[..], ptr, stream.cu_stream()) }
            .and_then(|()| stream.synchronize())
            .context("copying input bytes to the host")?;
    }
    Ok(host)
}

/// Two spans' buffers of chaining values, on the device and pinned on the
/// host, and the events that say each span's values are on the host. The
/// GPU keeps them between inputs ([`GpuBackend::take_span_buffers`]):
/// pinned memory takes milliseconds to make.
pub(crate) struct SpanBuffers {
    /// Bytes of values each buffer holds.
    len: usize,
    device: [CudaSlice<u8>; 2],
    host: [PinnedHostSlice<u8>; 2],
    done: [CudaEvent; 2],
}

impl SpanBuffers {
    fn new(gpu: &GpuBackend, len: usize) -> Result<Self, GpuError> {
        let device = || {
            // SAFETY: the kernel writes every byte copied back.
            unsafe { gpu.compute.alloc::<u8>(len) }
                .context("allocating a device buffer for chaining values")
        };
        let host = || {
            // SAFETY: written by the copies back before it is read; cached
            // (not write-combined), since the host reads it.
            unsafe { gpu.ctx.alloc_pinned_with_flags::<u8>(len, 0) }
                .context("allocating pinned host memory for chaining values")
        };
        let event = || gpu.ctx.new_event(None).context("creating an event");
        Ok(SpanBuffers {
            len,
            device: [device()?, device()?],
            host: [host()?, host()?],
            done: [event()?, event()?],
        })
    }
}

impl GpuBackend {
    /// Buffers for spans of `len` bytes of values: the kept ones where they
    /// are free and large enough, else new ones.
    fn take_span_buffers(&self, len: usize) -> Result<SpanBuffers, GpuError> {
        if let Some(kept) = self.span_buffers.lock().ok().and_then(|mut k| k.take())
            && kept.len >= len
        {
            return Ok(kept);
        }
        SpanBuffers::new(self, len)
    }

    /// Keeps `buffers`, whose every copy has been waited for, for the next
    /// input: the larger, where another input kept some meanwhile.
    fn return_span_buffers(&self, buffers: SpanBuffers) {
        if let Ok(mut kept) = self.span_buffers.lock()
            && kept.as_ref().is_none_or(|k| k.len < buffers.len)
        {
            *kept = Some(buffers);
        }
    }
}

/// The chunks' spans on their way through the chunk kernel: two output
/// buffers, so that the GPU hashes span k while the host absorbs the values
/// of span k − 1.
struct Spans<'a> {
    gpu: &'a GpuBackend,
    kernel: &'a ChunkKernel,
    chunk_len: usize,
    count: usize,
    per_launch: usize,
    cv_len: usize,
    buffers: SpanBuffers,
}

impl<'a> Spans<'a> {
    /// Buffers for `count` chunks of `chunk_len` bytes through `spec`.
    fn new(
        gpu: &'a GpuBackend,
        kernel: &'a ChunkKernel,
        spec: &SpongeSpec,
        chunk_len: usize,
        count: usize,
    ) -> Result<Self, GpuError> {
        let cv_len = spec.output_len();
        let per_launch = (LAUNCH_BYTES / chunk_len)
            .min(LAUNCH_VALUES / cv_len)
            .clamp(1, count);
        Ok(Spans {
            gpu,
            kernel,
            chunk_len,
            count,
            per_launch,
            cv_len,
            buffers: gpu.take_span_buffers(per_launch * cv_len)?,
        })
    }

    /// Hashes the chunks from device address `from` and hands their values
    /// to `absorb`, in order.
    fn run(mut self, from: u64, mut absorb: impl FnMut(&[u8])) -> Result<(), GpuError> {
        let began = Instant::now();
        // Time spent waiting for the GPU's values, and in the last node.
        let (mut waited, mut absorbed) = (Duration::ZERO, Duration::ZERO);
        let mut take = |spans: &Self, buffer: usize, n: usize| -> Result<(), GpuError> {
            let start = Instant::now();
            let values = spans.values(buffer, n)?;
            let got = Instant::now();
            absorb(values);
            waited += got - start;
            absorbed += got.elapsed();
            Ok(())
        };
        let mut previous: Option<(usize, usize)> = None;
        let mut spans = 0;
        for (span, first) in (0..self.count).step_by(self.per_launch).enumerate() {
            let n = self.per_launch.min(self.count - first);
            let at = from + (first * self.chunk_len) as u64;
            self.launch(span % 2, at, n)?;
            if let Some((buffer, n)) = previous {
                take(&self, buffer, n)?;
            }
            previous = Some((span % 2, n));
            spans += 1;
        }
        if let Some((buffer, n)) = previous {
            take(&self, buffer, n)?;
        }
        self.gpu.return_span_buffers(self.buffers);
        trace(|| {
            format!(
                "device chunks: {} in {spans} spans in {:.3} ms; waited for the GPU {:.3} ms, last node {:.3} ms",
                self.count,
                ms(began.elapsed()),
                ms(waited),
                ms(absorbed)
            )
        });
        Ok(())
    }

    /// Queues `n` chunks from `at` through the kernel into buffer `k`, and
    /// their values' copy back.
    fn launch(&mut self, k: usize, at: u64, n: usize) -> Result<(), GpuError> {
        let stream = &self.gpu.compute;
        let out = address(&self.buffers.device[k], stream);
        let (chunk_len, count) = (self.chunk_len as u64, n as u64);
        let mut launch = stream.launch_builder(&self.kernel.function);
        launch.arg(&at).arg(&chunk_len).arg(&count).arg(&out);
        // SAFETY: the arguments match chunk_values; `at` holds `n` chunks of
        // the caller's input, `out` (a whole allocation: 8-byte aligned)
        // room for `n` values.
        unsafe { launch.launch(self.kernel.launch_config(count)) }
            .context("launching the chunk kernel")?;
        let len = n * self.cv_len;
        let host = self.buffers.host[k]
            .as_mut_slice()
            .context("using pinned memory")?;
        // SAFETY: buffer k's values of two spans ago were absorbed before
        // this call; this copy is waited for (`done`) before they are read.
        unsafe { result::memcpy_dtoh_async(&mut host[..len], out, stream.cu_stream()) }
            .context("copying chaining values back")?;
        self.buffers.done[k]
            .record(stream)
            .context("recording an event")
    }

    /// Buffer `k`'s `n` values, once they are on the host.
    fn values(&self, k: usize, n: usize) -> Result<&[u8], GpuError> {
        self.buffers.done[k]
            .synchronize()
            .context("waiting for the chunk kernel")?;
        let host = self.buffers.host[k]
            .as_slice()
            .context("using pinned memory")?;
        Ok(&host[..n * self.cv_len])
    }
}
