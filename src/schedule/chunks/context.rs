//! The CPU's share of a piece: its chunks' chaining values, computed by
//! the workers side by side (or by the calling thread alone, inline).

use super::*;

/// What a message's chunks are hashed with: its parameters, and the CPU
/// backend whose workers (its pool, or the calling thread alone where the
/// input runs inline) share them out.
pub(crate) struct Context<'a> {
    pub(super) params: &'a StandardParams,
    pub(super) cpu: &'a CpuBackend,
    pub(super) workers: Workers<'a>,
    /// The chunks' sponge (none for TurboSHAKE).
    pub(super) leaf: Option<SpongeSpec>,
    pub(super) chunk_len: usize,
}

impl<'a> Context<'a> {
    /// Made where the walk runs (inside `CpuBackend::run_*`), which decides
    /// the workers.
    pub(crate) fn new(params: &'a StandardParams, cpu: &'a CpuBackend) -> Self {
        Context {
            params,
            cpu,
            workers: cpu.workers(),
            leaf: params.standard().chunk_spec(),
            chunk_len: chunk_len(params),
        }
    }

    /// The chunks' sponge.
    pub(super) fn leaf(&self) -> SpongeSpec {
        self.leaf.expect("only functions with chunks absorb them")
    }

    /// The chunks' length: KT's 8192 bytes, ParallelHash's B.
    pub(crate) fn chunk_len(&self) -> usize {
        self.chunk_len
    }

    /// The chaining values of whole chunks (`values` holds one per chunk),
    /// side by side on the workers.
    pub(super) fn chaining_values(&self, chunks: &[u8], values: &mut [u8]) {
        let count = chunks.len() / self.chunk_len;
        if count == 0 {
            return;
        }
        let cv_len = self.params.standard().chaining_len();
        let per_task = count
            .div_ceil(self.workers.threads() * TASKS_PER_THREAD)
            .clamp(1, CHUNKS_PER_TASK);
        let (cpu, leaf, chunk_len) = (self.cpu, self.leaf(), self.chunk_len);
        self.workers.for_each_pair(
            (values, per_task * cv_len),
            (chunks, per_task * chunk_len),
            1,
            |_, values, chunks| cpu.chaining_values(&leaf, chunks, chunk_len, values),
        );
    }

    /// The chaining values of the whole chunks of `input` from `offset`
    /// (`values` holds one per chunk), side by side on the workers, each
    /// task reading its run of chunks into its worker's buffer, where they
    /// are hashed while still in the core's cache.
    pub(super) fn chaining_values_of_file(
        &self,
        input: &InputFile,
        offset: u64,
        values: &mut [u8],
    ) -> Result<(), HashError> {
        let cv_len = self.params.standard().chaining_len();
        let count = values.len() / cv_len;
        if count == 0 {
            return Ok(());
        }
        let (cpu, leaf, chunk_len) = (self.cpu, self.leaf(), self.chunk_len);
        let per_task = count
            .div_ceil(self.workers.threads() * TASKS_PER_THREAD)
            .clamp(1, (READ_TASK_BYTES / chunk_len).max(CHUNKS_PER_TASK));
        self.workers
            .try_for_each_chunk(values, per_task * cv_len, |k, values| {
                let at = offset + (k * per_task * chunk_len) as u64;
                let len = values.len() / cv_len * chunk_len;
                with_read_buffer(len, |chunks| {
                    input.read_exact_at(chunks, at)?;
                    cpu.chaining_values(&leaf, chunks, chunk_len, values);
                    Ok(())
                })
            })
    }

    /// Whole chunks per wave of a piece: their values at most
    /// [`MAX_VALUES_LEN`].
    pub(super) fn chunks_per_wave(&self) -> usize {
        (MAX_VALUES_LEN / self.params.standard().chaining_len()).max(1)
    }
}
