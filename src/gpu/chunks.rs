//! A standard function's chunks on the GPU ([`ChunkEngine`]): runs of whole
//! chunks staged into the ring's pinned buffers (pipeline.rs, as LI's
//! leaves), copied to the device one transfer per launch, hashed by the
//! chunk kernel (kernels/chunks.cu) and their chaining values copied back
//! (32 or 64 bytes per chunk: 0.4–0.8 % of the bytes for KT) into pinned
//! memory of the same slot, before the slot's `hashed` event. The last node
//! is the host's (it absorbs those few bytes in order).
//!
//! While the GPU hashes one launch the host stages the next: `submit`
//! returns once its chunks are staged, and waits only for a slot to come
//! free. The values are collected when their slot is reused or when the
//! caller takes them.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use cudarc::driver::{PushKernelArg, result};

use crate::engine::{ChunkBytes, ChunkEngine};
use crate::error::HashError;
use crate::progress::EngineId;
use crate::trace::trace;

use super::kernels::{ChunkKernel, address};
use super::pipeline::{Ring, Staged};
use super::{Context, CopyMode, GpuBackend, GpuError, guard};

/// The most bytes of chaining values one launch writes: for small chunks
/// (ParallelHash with B = 1 gives 32 or 64 bytes per byte) a launch holds
/// fewer chunks than a slot would.
const VALUES_MAX: usize = 8 << 20;

/// One submission's chaining values as its launches complete.
struct Submission {
    values: Vec<u8>,
    /// Its launches still in flight.
    launches: usize,
}

/// The chunks of one message that are the GPU's.
pub(crate) struct GpuChunks<'a> {
    ring: Ring<'a>,
    kernel: &'a ChunkKernel,
    chunk_len: usize,
    /// Chunks per launch at most.
    launch_chunks: usize,
    /// Launches in flight, oldest first: their slot and chunk count.
    in_flight: VecDeque<(usize, usize)>,
    /// Submissions not taken yet, oldest first.
    submissions: VecDeque<Submission>,
}

impl<'a> GpuChunks<'a> {
    /// An engine for chunks of `chunk_len` bytes through `kernel`, on the
    /// ring `ring` (whose transfer buffers hold at least one chunk).
    pub(super) fn new(
        ring: Ring<'a>,
        kernel: &'a ChunkKernel,
        chunk_len: usize,
    ) -> Result<Self, GpuError> {
        let per_slot = ring.capacity() / chunk_len;
        if per_slot == 0 {
            return Err(GpuError::new(format!(
                "transfer buffers of {} bytes cannot hold a chunk of {chunk_len}",
                ring.capacity()
            )));
        }
        let launch_chunks = per_slot.min(VALUES_MAX / kernel.spec.output_len()).max(1);
        Ok(GpuChunks {
            ring,
            kernel,
            chunk_len,
            launch_chunks,
            in_flight: VecDeque::new(),
            submissions: VecDeque::new(),
        })
    }

    /// Waits for the oldest launch in flight and moves its chaining values
    /// to its submission.
    fn complete_oldest(&mut self) -> Result<(), GpuError> {
        let Some((index, count)) = self.in_flight.pop_front() else {
            return Ok(());
        };
        self.ring.retire(index)?;
        let len = count * self.kernel.spec.output_len();
        let Some(values) = self.ring.slot_mut(index).kept_values() else {
            return Err(GpuError::new("a chunk launch left no chaining values"));
        };
        let host = values.host.as_slice().context("using pinned memory")?;
        let Some(submission) = self.submissions.iter_mut().find(|s| s.launches > 0) else {
            return Err(GpuError::new("a launch completed with no submission"));
        };
        submission.values.extend_from_slice(&host[..len]);
        submission.launches -= 1;
        Ok(())
    }

    /// Stages, copies and hashes `count` chunks of `bytes` in one launch.
    fn launch(&mut self, bytes: ChunkBytes<'_>, count: usize) -> Result<(), HashError> {
        // The slot about to be reused: its values go to their submission first.
        let next = self.ring.next_index();
        let start = Instant::now();
        if self
            .in_flight
            .front()
            .is_some_and(|&(slot, _)| slot == next)
        {
            self.complete_oldest()?;
        }
        self.ring.retire(next)?;
        let freed = Instant::now();
        let (source, len) = match bytes {
            ChunkBytes::Memory(data) => (self.ring.stage(Staged::Memory(&[data]))?, data.len()),
            ChunkBytes::File { input, offset, len } => {
                (self.ring.stage(Staged::File(input, &[(offset, len)]))?, len)
            }
        };
        let staged = Instant::now();
        let gpu = self.ring.gpu();
        let (kernel, chunk_len) = (self.kernel, self.chunk_len as u64);
        let values_len = count * kernel.spec.output_len();
        self.ring.enqueue(source, |slot, device, len| {
            debug_assert_eq!(len, count as u64 * chunk_len);
            let values = slot.values(gpu, values_len)?;
            let out = address(&values.device, &gpu.compute);
            let count = count as u64;
            let mut launch = gpu.compute.launch_builder(&kernel.function);
            launch.arg(&device).arg(&chunk_len).arg(&count).arg(&out);
            // SAFETY: the arguments match chunk_values; the transfer
            // holds `count` chunks of `chunk_len` bytes, the values buffer
            // (8-byte aligned: a whole allocation) `count` values.
            unsafe { launch.launch(kernel.launch_config(count)) }
                .context("launching the chunk kernel")?;
            let host = values.host.as_mut_slice().context("using pinned memory")?;
            // SAFETY: the pinned buffer is not read before the slot's
            // `hashed` event, recorded after this copy, completes.
            unsafe {
                result::memcpy_dtoh_async(&mut host[..values_len], out, gpu.compute.cu_stream())
            }
            .context("copying chaining values back")?;
            Ok(())
        })?;
        trace(|| {
            let ms = |d: Duration| d.as_secs_f64() * 1e3;
            format!(
                "chunk launch, slot {next}: {len} B; slot free after {:.3} ms, staged in {:.3} ms, queued in {:.3} ms",
                ms(freed - start),
                ms(staged - freed),
                ms(staged.elapsed())
            )
        });
        self.in_flight.push_back((next, count));
        if let Some(submission) = self.submissions.back_mut() {
            submission.launches += 1;
        }
        Ok(())
    }
}

impl ChunkEngine for GpuChunks<'_> {
    fn id(&self) -> EngineId {
        self.ring.gpu().info().engine_id()
    }

    fn submit(&mut self, bytes: ChunkBytes<'_>) -> Result<(), HashError> {
        guard("hashing on the GPU", || {
            self.ring.bind()?;
            let count = bytes.len() / self.chunk_len;
            if bytes.len() != count * self.chunk_len {
                return Err(HashError::Internal(
                    "a GPU was handed part of a chunk".into(),
                ));
            }
            self.submissions.push_back(Submission {
                values: Vec::with_capacity(count * self.kernel.spec.output_len()),
                launches: 0,
            });
            let mut done = 0;
            while done < count {
                let n = (count - done).min(self.launch_chunks);
                let run = bytes.range(done * self.chunk_len, (done + n) * self.chunk_len);
                self.launch(run, n)?;
                done += n;
            }
            Ok(())
        })
    }

    fn take(&mut self, wait: bool) -> Result<Option<Vec<u8>>, HashError> {
        guard("hashing on the GPU", || {
            self.ring.bind()?;
            loop {
                let Some(front) = self.submissions.front() else {
                    return Err(HashError::Internal(
                        "chaining values taken from a GPU with none coming".into(),
                    ));
                };
                if front.launches == 0 {
                    return Ok(self.submissions.pop_front().map(|s| s.values));
                }
                let &(slot, _) = self
                    .in_flight
                    .front()
                    .expect("a submission with launches has one in flight");
                if !wait && !self.ring.is_hashed(slot)? {
                    return Ok(None);
                }
                self.complete_oldest()?;
            }
        })
    }

    fn busy(&self) -> (Duration, Duration) {
        self.ring.busy()
    }
}

impl GpuBackend {
    /// An engine for the chunks of one message of chunks of `chunk_len`
    /// bytes through `spec`'s sponge, handed pieces of up to `piece_len`
    /// bytes; `pool` stages them.
    pub(crate) fn begin_chunks<'a>(
        &'a self,
        spec: &crate::sponge::SpongeSpec,
        chunk_len: usize,
        mode: CopyMode,
        piece_len: usize,
        pool: &'a rayon::ThreadPool,
        times: &mut crate::timings::Timings,
    ) -> Result<Box<dyn ChunkEngine + 'a>, HashError> {
        guard("starting a GPU digest", || {
            let buffers = self.buffer_len(piece_len).max(chunk_len);
            let slots = crate::timings::timed(&mut times.gpu_init, || self.take_slots(buffers))?;
            let ring = Ring::new(self, slots, pool, mode);
            let (kernel, compile_time) = self.kernels.chunk_kernel(spec)?;
            times.compile += compile_time;
            let engine = GpuChunks::new(ring, kernel, chunk_len)?;
            Ok(Box::new(engine) as Box<dyn ChunkEngine + 'a>)
        })
    }
}
