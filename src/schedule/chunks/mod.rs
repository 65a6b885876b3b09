//! The walk over a message for the standard functions. Pieces of M are
//! whole chunks (KT's 8192 bytes, ParallelHash's B); the chaining values of
//! a piece's chunks are computed side by side, then fed to the last node in
//! order, by one worker while the others hash the next chunks. Nothing of a
//! chunk outlives its piece, so memory is one piece (none, for a file whose
//! chunks the workers read themselves) and two waves' chaining values,
//! whatever the message's length. TurboSHAKE is one sponge over the whole
//! message, on one thread.
//!
//! [`Walk`] is the state between pieces (the last node and an unfinished
//! last chunk), which `crate::stream` keeps between the parts of an input
//! given by `update`; a part of a file (`crate::parts`) walks its chunks
//! into a [`PartSink`] instead ([`hash_part_chunks`]), which keeps their
//! chaining values for the join. [`hash`] drives it over an input, its chunks on the
//! CPU's workers and on GPUs ([`ChunkEngine`]): the CPU hashes chunks
//! [0, a) of a piece while each GPU is handed the next run after it, which
//! it stages and hashes behind the caller's back. Chunks hold no state from
//! one piece to the next, so the split may change at every piece with
//! nothing to move: it follows each engine's measured rate ([`Split`]),
//! and under auto whether the CPU hashes beside the GPUs at all is tried
//! ([`RoleTrial`]). The
//! chaining values are fed to the last node in the message's order as they
//! come back: a GPU's may lag a few launches behind (as many as its ring of
//! buffers holds), the CPU's after them waiting meanwhile, at most
//! [`MAX_VALUES_LEN`] of them per wave of a piece. Memory is one piece, the
//! GPUs' buffers and a few waves' chaining values, whatever the message's
//! length.

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use crate::cpu::CpuBackend;
use crate::cpu::workers::Workers;
use crate::engine::{ChunkBytes, ChunkEngine};
use crate::error::HashError;
use crate::input::{InputFile, with_read_buffer};
use crate::message::{self, Access, Blocks, Input, Piece};
use crate::progress::{EngineId, EngineShare, Progress};
use crate::schedule::{Latecomers, NoLatecomers, Standing};
use crate::sponge::SpongeSpec;
use crate::standard::node::LastNode;
use crate::standard::{Family, StandardParams, chunk_len, suffix};
use crate::trace;

/// Chunks per task at most when a piece's chunks are shared out: each task
/// is a run of neighbouring chunks, read once.
const CHUNKS_PER_TASK: usize = 64;
/// Tasks per worker thread a piece is cut into, so that threads that finish
/// early find work left.
const TASKS_PER_THREAD: usize = 4;
/// Bytes of chaining values computed at once, at most: chunks of a few
/// bytes have 32 or 64 bytes of value each, and a whole piece's at once
/// held 2.1 GB (RSS) for a 32 MiB file of ParallelHash256 with B = 1.
/// KT's and ParallelHash's usual pieces are one wave.
const MAX_VALUES_LEN: usize = 4 << 20;
/// Bytes a task reads at least when it reads its chunks from the file
/// itself: one system call per task, its bytes still
/// in the core's cache when they are hashed (64 of KT's chunks).
const READ_TASK_BYTES: usize = 512 << 10;

/// A piece as the walk reads it: chunks for the engines, and the bytes the
/// CPU hashes (from the mapping where the piece is mapped, else read).
#[derive(Clone, Copy)]
struct Bytes<'a> {
    chunks: ChunkBytes<'a>,
    mapped: Option<&'a [u8]>,
}

impl<'a> Bytes<'a> {
    fn of(piece: Piece<'a>) -> Self {
        match piece {
            Piece::Memory(bytes) => Bytes {
                chunks: ChunkBytes::Memory(bytes),
                mapped: None,
            },
            // GPUs read a file with pread into their buffers, faster than
            // copying through the mapping (as for LI:
            // docs/decisions/0011-gpu-staging-ring.md).
            Piece::Mapped {
                bytes,
                input,
                offset,
            } => Bytes {
                chunks: ChunkBytes::File {
                    input,
                    offset,
                    len: bytes.len(),
                },
                mapped: Some(bytes),
            },
            Piece::Unread { input, offset, len } => Bytes {
                chunks: ChunkBytes::File { input, offset, len },
                mapped: None,
            },
        }
    }

    /// The bytes `range` for an engine.
    fn chunks(&self, range: Range<usize>) -> ChunkBytes<'a> {
        self.chunks.range(range.start, range.end)
    }

    /// The bytes `range` in memory: borrowed, or read into `buffer`.
    fn slice<'b>(&self, range: Range<usize>, buffer: &'b mut Vec<u8>) -> Result<&'b [u8], HashError>
    where
        'a: 'b,
    {
        match self.mapped {
            Some(bytes) => Ok(&bytes[range]),
            None => {
                let chunks = self.chunks(range);
                match chunks {
                    ChunkBytes::Memory(bytes) => Ok(bytes),
                    ChunkBytes::File { .. } => chunks.read(buffer),
                }
            }
        }
    }
}

/// The engines besides the CPU's workers that take chunks: GPUs there from
/// the first piece, and the latecomers, which join later.
pub(crate) struct Engines<'a, 'j> {
    pub(crate) gpus: Vec<Box<dyn ChunkEngine + 'a>>,
    pub(crate) latecomers: &'j mut dyn Latecomers<Box<dyn ChunkEngine + 'a>>,
    pub(crate) split: Split,
}

impl<'a, 'j> Engines<'a, 'j> {
    /// The CPU's workers alone.
    pub(crate) fn cpu_only(latecomers: &'j mut NoLatecomers) -> Engines<'a, 'j> {
        Engines {
            gpus: Vec::new(),
            latecomers,
            split: Split::new(true),
        }
    }
}

/// What a message came to.
pub(crate) struct Walked {
    pub(crate) digest: Vec<u8>,
    /// Bytes of input.
    pub(crate) bytes: u64,
    /// Each engine that hashed chunks (the CPU first, with the first chunk
    /// and the last ones, or TurboSHAKE's whole message).
    pub(crate) shares: Vec<EngineShare>,
    /// The GPUs' copies and kernels, busy.
    pub(crate) copy_busy: Duration,
    pub(crate) kernel_busy: Duration,
}

/// What a part's chunks came to ([`hash_part_chunks`]).
pub(crate) struct PartWalked {
    pub(crate) sink: PartSink,
    /// Each engine that hashed chunks, the CPU first.
    pub(crate) shares: Vec<EngineShare>,
    /// The GPUs' copies and kernels, busy.
    pub(crate) copy_busy: Duration,
    pub(crate) kernel_busy: Duration,
}

/// The digest of `input` in pieces of about `piece_target` bytes, its chunks
/// on `cpu`'s workers and on `engines`.
pub(crate) fn hash<'a>(
    params: &StandardParams,
    input: &mut Input<'_>,
    cpu: &CpuBackend,
    engines: Engines<'a, '_>,
    piece_target: usize,
    progress: &dyn Progress,
) -> Result<Walked, HashError> {
    let framing = Blocks(chunk_len(params));
    let total_len = input.known_len();
    let cpu_takes_chunks = engines.split.cpu_takes_chunks();
    let has_chunks = params.standard().chunk_spec().is_some();
    // Each task of the CPU's workers reads its run of chunks into its own
    // buffer, and GPUs that take every chunk read the file themselves;
    // TurboSHAKE, one sponge on one thread, and a CPU of one thread find
    // their windows read in by helper threads ahead of them: one thread
    // copying every byte out of the page cache is slower than reading the
    // mapping in place
    // (docs/decisions/0005-standard-pieces-read-per-task.md).
    let cpu_reads = cpu_takes_chunks && has_chunks && cpu.threads() > 1;
    let access = if cpu_takes_chunks && !cpu_reads {
        Access::Map
    } else {
        Access::Read
    };
    // A file whose chunks the engines read themselves is walked in longer
    // pieces: nothing of them stays in memory, and a GPU alone is handed
    // four launches a wave, not one
    // (docs/decisions/0005-standard-pieces-read-per-task.md).
    let engines_read = cpu_reads || (has_chunks && !cpu_takes_chunks);
    let piece_len = match &*input {
        Input::File(_) if engines_read => file_piece_len(params, cpu),
        _ => piece_len(params, piece_target),
    };
    let cx = Context::new(params, cpu);
    let mut run = Shared::new(cx, Walk::new(params), engines, total_len, progress);
    let bytes = match input {
        Input::Bytes(data) => {
            message::for_each_piece_of_slice::<HashError>(
                &framing,
                data,
                piece_len,
                progress,
                |piece| run.piece(piece),
            )?;
            data.len() as u64
        }
        Input::File(file) => {
            let unmapped = AtomicBool::new(false);
            message::for_each_piece_of_file(
                &framing,
                file,
                piece_len,
                access,
                &unmapped,
                progress,
                |piece| run.piece(piece),
            )?;
            file.len()
        }
        Input::Sequential(reader) => message::for_each_piece_of_sequential::<HashError>(
            &framing,
            *reader,
            piece_len,
            progress,
            |bytes| run.piece(Piece::Memory(bytes)),
        )?,
    };
    run.finish(bytes)
}

/// What one part of a file keeps (docs/SPEC.md, "Parts and joins"): the
/// chunks `chunks` of S = M ‖ [`suffix`], M being `file` (`None`: empty),
/// walked as [`hash`] walks a message, their chaining values kept instead
/// of fed to the last node (KT's first chunk whole). Only the file's bytes
/// of those chunks are read: the whole chunks in pieces of `piece_len`
/// bytes (whole chunks), which the CPU's workers read task by task and a
/// GPU into its buffers; the range's last bytes in the file that are no
/// whole chunk, with the suffix's, go last, from memory.
pub(crate) fn hash_part_chunks<'a>(
    params: &StandardParams,
    file: Option<&InputFile>,
    chunks: Range<u64>,
    cpu: &CpuBackend,
    engines: Engines<'a, '_>,
    piece_len: usize,
    progress: &dyn Progress,
) -> Result<PartWalked, HashError> {
    let chunk_len = chunk_len(params) as u64;
    debug_assert!((piece_len as u64).is_multiple_of(chunk_len));
    let suffix = suffix(params);
    let file_len = file.map_or(0, InputFile::len);
    let s_len = file_len + suffix.len() as u64;
    let start = (chunks.start * chunk_len).min(s_len);
    let end = (chunks.end * chunk_len).min(s_len);
    let in_file = start.min(file_len)..end.min(file_len);
    let whole_end = in_file.start + (in_file.end - in_file.start) / chunk_len * chunk_len;
    let first_chunk = params.standard().family() == Family::Kangaroo && start == 0 && end > 0;
    let cx = Context::new(params, cpu);
    let walk = Walk::of_part(first_chunk);
    let mut run = Shared::new(cx, walk, engines, Some(end - start), progress);
    if let Some(input) = file {
        let mut offset = in_file.start;
        while offset < whole_end {
            let len = (piece_len as u64).min(whole_end - offset);
            // The kernel reads the next piece while this one is hashed.
            let next = offset + len;
            input.prefetch(next, (piece_len as u64).min(whole_end - next));
            run.piece(Piece::Unread {
                input,
                offset,
                len: len as usize,
            })?;
            progress.advance(len);
            offset = next;
        }
    }
    // The last bytes: the file's short of a whole chunk, then the suffix's.
    let mut last = vec![0u8; (in_file.end - whole_end) as usize];
    if let Some(input) = file.filter(|_| !last.is_empty()) {
        input.read_exact_at(&mut last, whole_end)?;
        progress.advance(last.len() as u64);
    }
    let in_suffix = start.max(file_len) - file_len..end.max(file_len) - file_len;
    last.extend_from_slice(&suffix[in_suffix.start as usize..in_suffix.end as usize]);
    if !last.is_empty() {
        run.piece(Piece::Memory(&last))?;
    }
    run.finish_part()
}

/// The length of the pieces a message is walked in: whole chunks, about
/// `piece_target` bytes.
pub(crate) fn piece_len(params: &StandardParams, piece_target: usize) -> usize {
    message::piece_len(chunk_len(params), piece_target)
}

/// The length of the pieces of a file whose chunks the CPU's workers read
/// themselves, task by task: longer, since nothing of them stays in memory.
pub(crate) fn file_piece_len(params: &StandardParams, cpu: &CpuBackend) -> usize {
    let chunk = chunk_len(params);
    let target = cpu.standard_file_piece_target();
    target.max(chunk).next_multiple_of(chunk)
}

mod apart;
mod context;
mod sharing;
#[cfg(test)]
mod tests;
mod walk;

pub(crate) use crate::schedule::Split;
pub(crate) use apart::{can_walk_apart, hash_apart};
pub(crate) use context::Context;
use sharing::Shared;
pub(crate) use walk::{PartSink, Sink, Walk};
