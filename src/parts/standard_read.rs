//! Hashing one part of a standard function's file (docs/SPEC.md, "Parts of
//! the standard functions"): the chunks it owns, one range of the file,
//! walked by the standard functions' own walk (`schedule::chunks`), their
//! chaining values kept for the join. Each task of the CPU's workers reads
//! its own run of chunks; under `--backend gpu` the first GPU asked for
//! reads and hashes them instead (the CPU takes only KT's first chunk and
//! the range's last bytes).

use std::ops::Range;
use std::path::Path;
use std::time::Instant;

use super::read::{PartOutput, open};
use super::standard::{StandardPart, bytes_read, holds_first_chunk, split};
use super::{Body, Origin, Part};
use crate::error::HashError;
use crate::gpu::CopyMode;
use crate::hasher::{BackendUsed, Hasher};
use crate::input::InputFile;
use crate::progress::Progress;
use crate::schedule::NoJoiners;
use crate::schedule::chunks::{self, Engines, PartWalked, Split};
use crate::sponge::SpongeSpec;
use crate::standard;
use crate::standard::StandardParams;
use crate::timings::{Timings, timed};

impl Hasher {
    /// Part `index` of `count` of the file at `path` under a standard
    /// function, which a part records as `name` ([`Hasher::hash_part`]).
    pub(super) fn hash_standard_part(
        &self,
        params: &StandardParams,
        path: &Path,
        name: Vec<u8>,
        index: u64,
        count: u64,
        progress: &dyn Progress,
    ) -> Result<PartOutput, HashError> {
        let start = Instant::now();
        let Some(spec) = params.standard().chunk_spec() else {
            return Err(HashError::Internal(
                "a part of a function without chunks".into(),
            ));
        };
        let mut timings = Timings::default();
        let opened = timed(&mut timings.open, || open(path))?;
        let (file_len, stamp) = opened.stamp()?;
        let (chunks, chunk_count) = split(params, file_len, count, index);
        let read_len = bytes_read(params, &chunks, file_len);
        progress.start(Some(read_len));
        let on_gpu = self.chunk_part_on_gpu(read_len);
        let walked = self.cpu().run_pieces(|| {
            let file = opened.input();
            let chunks = chunks.clone();
            if on_gpu {
                self.part_chunks_on_gpu(params, &spec, file, chunks, progress, &mut timings)
            } else {
                self.part_chunks_on_cpu(params, file, chunks, progress, &mut timings)
            }
        })?;
        opened.check_unchanged(&stamp)?;
        timings.copy_busy += walked.copy_busy;
        timings.kernel_busy += walked.kernel_busy;
        timings.total = start.elapsed();
        let gpu_used = walked
            .shares
            .iter()
            .any(|s| s.engine.is_gpu() && s.bytes > 0);
        let origin = Origin::new(&stamp, file_len, count, index, name);
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
        Ok(PartOutput {
            part: Part {
                origin,
                body: Body::Standard(part),
            },
            bytes_read: read_len,
            backend: if gpu_used {
                BackendUsed::Gpu
            } else {
                BackendUsed::Cpu
            },
            timings,
            fallback_note: None,
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
        let mut none = NoJoiners;
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
        let mut none = NoJoiners;
        let engines = Engines {
            gpus: vec![engine],
            joiners: &mut none,
            split: Split::new(false),
        };
        timed(&mut timings.leaves, || {
            chunks::hash_part_chunks(params, file, chunks, cpu, engines, piece_len, progress)
        })
    }
}
