//! Hashing one part of a standard function's file (docs/SPEC.md, "Parts of
//! the standard functions"): the chunks it owns, one range of the file,
//! walked by the standard functions' own walk (`schedule::chunks`), their
//! chaining values kept for the join. Each task of the CPU's workers reads
//! its own run of chunks; under `--backend gpu` the first GPU asked for
//! reads and hashes them instead (the CPU takes only KT's first chunk and
//! the range's last bytes).

use std::ops::Range;

use super::standard::{StandardPart, bytes_read, holds_first_chunk, split};
use super::{Body, Made, PartFile};
use crate::error::HashError;
use crate::gpu::CopyMode;
use crate::hasher::{BackendUsed, Hasher};
use crate::input::InputFile;
use crate::progress::Progress;
use crate::schedule::NoLatecomers;
use crate::schedule::chunks::{self, Engines, PartWalked, Split};
use crate::sponge::SpongeSpec;
use crate::standard;
use crate::standard::StandardParams;
use crate::timings::{Timings, timed};

impl Hasher {
    /// The chunks part `part.index` of `part.count` owns, of a standard
    /// function's file `part.file` ([`Hasher::hash_part`]): one range of
    /// the file, walked by the standard functions' own walk, with their
    /// chaining values (and KT's first chunk, where the part holds it).
    pub(super) fn standard_part(
        &self,
        params: &StandardParams,
        part: PartFile<'_>,
        progress: &dyn Progress,
        timings: &mut Timings,
    ) -> Result<Made, HashError> {
        let Some(spec) = params.standard().chunk_spec() else {
            return Err(HashError::Internal(
                "a part of a function without chunks".into(),
            ));
        };
        let (file, file_len) = (part.file, part.file_len);
        let (chunks, chunk_count) = split(params, file_len, part.count, part.index);
        let read_len = bytes_read(params, &chunks, file_len);
        progress.start(Some(read_len));
        let on_gpu = self.chunk_part_on_gpu(read_len);
        let gpu = |p: &dyn Progress, t: &mut Timings| {
            self.part_chunks_on_gpu(params, &spec, file, chunks.clone(), p, t)
        };
        let cpu = |p: &dyn Progress, t: &mut Timings| {
            self.part_chunks_on_cpu(params, file, chunks.clone(), p, t)
        };
        let (walked, note) = self.part_on_engines(on_gpu, progress, timings, gpu, cpu)?;
        timings.copy_busy += walked.copy_busy;
        timings.kernel_busy += walked.kernel_busy;
        let gpu_used = walked
            .shares
            .iter()
            .any(|s| s.engine.is_gpu() && s.bytes > 0);
        debug_assert_eq!(
            walked.sink.first_chunk.is_empty(),
            !holds_first_chunk(params, &chunks)
        );
        let part = StandardPart {
            params: params.clone(),
            chunks,
            chunk_count,
            first_chunk: walked.sink.first_chunk,
            values: walked.sink.values,
        };
        Ok(Made {
            body: Body::Standard(part),
            read_len,
            backend: if gpu_used {
                BackendUsed::Gpu
            } else {
                BackendUsed::Cpu
            },
            note,
        })
    }

    /// The part's chunks on the CPU's workers, each task reading its own.
    fn part_chunks_on_cpu(
        &self,
        params: &StandardParams,
        file: Option<&InputFile>,
        chunks: Range<u64>,
        progress: &dyn Progress,
        timings: &mut Timings,
    ) -> Result<PartWalked, HashError> {
        let cpu = self.cpu();
        let mut none = NoLatecomers;
        let engines = Engines::cpu_only(&mut none);
        let piece_len = chunks::file_piece_len(params, cpu);
        timed(&mut timings.leaves, || {
            chunks::hash_part_chunks(params, file, chunks, cpu, engines, piece_len, progress)
        })
    }

    /// The part's chunks on the first GPU the options name (a host with
    /// several runs one part on each: `--device`), which reads them itself.
    fn part_chunks_on_gpu(
        &self,
        params: &StandardParams,
        spec: &SpongeSpec,
        file: Option<&InputFile>,
        chunks: Range<u64>,
        progress: &dyn Progress,
        timings: &mut Timings,
    ) -> Result<PartWalked, HashError> {
        let gpu = self.gpu()?;
        timings.gpu_init = gpu.info().init;
        let cpu = self.cpu();
        let piece_len = chunks::piece_len(params, cpu.standard_piece_target());
        let chunk_len = standard::chunk_len(params);
        let engine = gpu.begin_chunks(
            spec,
            chunk_len,
            CopyMode::Staging,
            piece_len,
            cpu.pool(),
            timings,
        )?;
        let mut none = NoLatecomers;
        let engines = Engines {
            gpus: vec![engine],
            latecomers: &mut none,
            split: Split::new(false),
        };
        timed(&mut timings.leaves, || {
            chunks::hash_part_chunks(params, file, chunks, cpu, engines, piece_len, progress)
        })
    }
}
