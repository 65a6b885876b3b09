//! The walk over a message for the standard functions. Pieces of M are
//! whole chunks (KT's 8192 bytes, ParallelHash's B); the chaining values of
//! a piece's chunks are computed side by side, then fed to the last node in
//! order, by one worker while the others hash the next chunks. Nothing of a
//! chunk outlives its piece, so memory is one piece (none, for a file whose
//! chunks the workers read themselves) and two rounds' chaining values,
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
//! [`MAX_VALUES_LEN`] of them per round of a piece. Memory is one piece, the
//! GPUs' buffers and a few rounds' chaining values, whatever the message's
//! length.

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use super::node::LastNode;
use super::{Family, StandardParams};
use crate::cpu::CpuBackend;
use crate::cpu::chunks::LeafSpec;
use crate::cpu::workers::Workers;
use crate::error::HashError;
use crate::input::{InputFile, with_read_buffer};
use crate::message::{self, Access, Blocks, Input, Piece};
use crate::progress::{EngineShare, Progress};
use crate::schedule::Standing;
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
/// KT's and ParallelHash's usual pieces are one batch.
const MAX_VALUES_LEN: usize = 4 << 20;
/// Bytes a task reads at least when it reads its chunks from the file
/// itself: one system call per task, its bytes still
/// in the core's cache when they are hashed (64 of KT's chunks).
const READ_TASK_BYTES: usize = 512 << 10;

/// Whole chunks handed to an engine: bytes in memory, or a range of the
/// input file that the engine reads where it wants them.
#[derive(Clone, Copy)]
pub(crate) enum ChunkBytes<'a> {
    Memory(&'a [u8]),
    File {
        input: &'a InputFile,
        offset: u64,
        len: usize,
    },
}

impl<'a> ChunkBytes<'a> {
    pub(crate) fn len(&self) -> usize {
        match *self {
            ChunkBytes::Memory(bytes) => bytes.len(),
            ChunkBytes::File { len, .. } => len,
        }
    }

    /// The bytes from `start` to `end`.
    pub(crate) fn range(&self, start: usize, end: usize) -> ChunkBytes<'a> {
        match *self {
            ChunkBytes::Memory(bytes) => ChunkBytes::Memory(&bytes[start..end]),
            ChunkBytes::File { input, offset, .. } => ChunkBytes::File {
                input,
                offset: offset + start as u64,
                len: end - start,
            },
        }
    }

    /// The bytes in memory: borrowed, or read into `buffer` (on the
    /// calling thread's pool, a mebibyte per task).
    pub(crate) fn read<'b>(&self, buffer: &'b mut Vec<u8>) -> Result<&'b [u8], HashError>
    where
        'a: 'b,
    {
        match *self {
            ChunkBytes::Memory(bytes) => Ok(bytes),
            ChunkBytes::File { input, offset, len } => {
                buffer.resize(len, 0);
                input.read_parts_at(vec![(&mut buffer[..], offset)])?;
                Ok(buffer)
            }
        }
    }
}

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
            // copying through the mapping (as for LI).
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

/// An engine that hashes whole chunks behind the caller's back (a GPU):
/// what it is handed is hashed while the caller goes on, and the chaining
/// values come back in the order the chunks were handed over.
pub(crate) trait ChunkEngine: Send {
    /// Its name in the shares: `gpu0`.
    fn name(&self) -> String;

    /// Starts on the whole chunks of `bytes`, which it no longer needs when
    /// this returns (it copied or read them). May wait for buffers of
    /// earlier chunks to come free.
    fn submit(&mut self, bytes: ChunkBytes<'_>) -> Result<(), HashError>;

    /// The chaining values of the oldest submission not taken yet, once
    /// they are all done: waiting for them when `wait`, else `None` while
    /// they are not.
    fn take(&mut self, wait: bool) -> Result<Option<Vec<u8>>, HashError>;

    /// The time its copies and kernels were busy so far.
    fn busy(&self) -> (Duration, Duration);
}

/// Chunk engines that may join while an input is hashed (GPUs starting up).
pub(crate) trait ChunkJoiners<'a> {
    /// Engines ready to join now; an error where one that had to join cannot.
    fn poll(&mut self, now: &Standing) -> Result<Vec<Box<dyn ChunkEngine + 'a>>, HashError>;
}

/// No engine joins.
pub(crate) struct NoChunkJoiners;

impl<'a> ChunkJoiners<'a> for NoChunkJoiners {
    fn poll(&mut self, _now: &Standing) -> Result<Vec<Box<dyn ChunkEngine + 'a>>, HashError> {
        Ok(Vec::new())
    }
}

/// The engines besides the CPU's workers that take chunks: GPUs there from
/// the first piece, and those that join later.
pub(crate) struct Engines<'a, 'j> {
    pub(crate) gpus: Vec<Box<dyn ChunkEngine + 'a>>,
    pub(crate) joiners: &'j mut dyn ChunkJoiners<'a>,
    pub(crate) split: Split,
}

impl Engines<'_, '_> {
    /// The CPU's workers alone.
    pub(crate) fn cpu_only(joiners: &mut NoChunkJoiners) -> Engines<'_, '_> {
        Engines {
            gpus: Vec::new(),
            joiners,
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
    let has_chunks = params.standard().leaf_spec().is_some();
    // Each task of the CPU's workers reads its run of chunks into its own
    // buffer, and GPUs that take every chunk read the file themselves;
    // TurboSHAKE, one sponge on one thread, and a CPU of one thread find
    // their windows read in by helper threads ahead of them: one thread
    // copying every byte out of the page cache took KT128 of 1 GiB from
    // 0.26 s mapped to 0.39 s (H200 machine, docs/PERFORMANCE.md).
    let cpu_reads = cpu_takes_chunks && has_chunks && cpu.threads() > 1;
    let access = if cpu_takes_chunks && !cpu_reads {
        Access::Map
    } else {
        Access::Read
    };
    // A file whose chunks the engines read themselves is walked in longer
    // pieces: nothing of them stays in memory, and a GPU alone is handed
    // four launches a round, not one (KT128 of 16 GiB on the H200 machine's
    // GPU: 52.5 against 51.8 GB/s, one run).
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
        Input::Stream(reader) => message::for_each_piece_of_stream::<HashError>(
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

/// The length of the blocks a message is cut into: KT's chunks,
/// ParallelHash's B, or for TurboSHAKE its rate (any whole number of rate
/// blocks would do).
pub(crate) fn chunk_len(params: &StandardParams) -> usize {
    match params.standard().family() {
        Family::TurboShake => params.standard().rate(),
        Family::Kangaroo | Family::ParallelHash => params.block_size(),
    }
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

/// What S adds after M: KT's C ‖ length_encode(|C|) (RFC 9861 §3.2);
/// nothing for ParallelHash and TurboSHAKE.
pub(crate) fn suffix(params: &StandardParams) -> Vec<u8> {
    if params.standard().family() != Family::Kangaroo {
        return Vec::new();
    }
    let c = params.customization();
    let mut suffix = c.to_vec();
    suffix.extend_from_slice(&super::encode::length_encode(c.len() as u64));
    suffix
}

/// n, the chunks of a message of `message_len` bytes: KT's 8192-byte
/// chunks of S = M ‖ C ‖ length_encode(|C|) (one at least), ParallelHash's
/// B-byte blocks of X (none for an empty X); TurboSHAKE has none.
pub(crate) fn chunk_count(params: &StandardParams, message_len: u64) -> u64 {
    match params.standard().family() {
        Family::TurboShake => 0,
        Family::Kangaroo | Family::ParallelHash => {
            let s_len = message_len + suffix(params).len() as u64;
            s_len.div_ceil(chunk_len(params) as u64)
        }
    }
}

/// What a message's chunks are hashed with: its parameters, and the CPU
/// backend whose workers (its pool, or the calling thread alone where the
/// input runs inline) share them out.
pub(crate) struct Context<'a> {
    params: &'a StandardParams,
    cpu: &'a CpuBackend,
    workers: Workers<'a>,
    /// The chunks' sponge (none for TurboSHAKE).
    leaf: Option<LeafSpec>,
    chunk_len: usize,
}

impl<'a> Context<'a> {
    /// Made where the walk runs (inside `CpuBackend::run_*`), which decides
    /// the workers.
    pub(crate) fn new(params: &'a StandardParams, cpu: &'a CpuBackend) -> Self {
        Context {
            params,
            cpu,
            workers: cpu.workers(),
            leaf: params.standard().leaf_spec(),
            chunk_len: chunk_len(params),
        }
    }

    /// The chunks' sponge.
    fn leaf(&self) -> LeafSpec {
        self.leaf.expect("only functions with chunks absorb them")
    }

    /// The chunks' length: KT's 8192 bytes, ParallelHash's B.
    pub(crate) fn chunk_len(&self) -> usize {
        self.chunk_len
    }

    /// The chaining values of whole chunks (`values` holds one per chunk),
    /// side by side on the workers.
    fn chaining_values(&self, chunks: &[u8], values: &mut [u8]) {
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
    fn chaining_values_of_file(
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

    /// Whole chunks per round of a piece: their values at most
    /// [`MAX_VALUES_LEN`].
    fn chunks_per_round(&self) -> usize {
        (MAX_VALUES_LEN / self.params.standard().chaining_len()).max(1)
    }
}

/// Where a walk's chunks go, in the message's order: the last node of a
/// digest ([`LastNode`]), or a part's store ([`PartSink`]).
pub(crate) trait Sink: Send {
    /// Whether the next chunk is KT's first, taken whole.
    fn wants_first_chunk(&self) -> bool;
    /// KT's first chunk S_0, or TurboSHAKE's next bytes.
    fn absorb_message(&mut self, bytes: &[u8]);
    /// The chaining values of the next `count` chunks.
    fn absorb_chaining_values(&mut self, values: &[u8], count: u64);
}

impl Sink for LastNode {
    fn wants_first_chunk(&self) -> bool {
        LastNode::wants_first_chunk(self)
    }
    fn absorb_message(&mut self, bytes: &[u8]) {
        LastNode::absorb_message(self, bytes)
    }
    fn absorb_chaining_values(&mut self, values: &[u8], count: u64) {
        LastNode::absorb_chaining_values(self, values, count)
    }
}

/// What a part keeps of its chunks (docs/SPEC.md, "Parts and joins"): KT's
/// first chunk S_0 whole, where the part owns it, and the chaining values
/// of its other chunks, in order, for the join to feed the last node.
#[derive(Clone, Debug, Default)]
pub(crate) struct PartSink {
    /// The part owns KT's chunk 0 and has not had it yet.
    wants_first_chunk: bool,
    pub(crate) first_chunk: Vec<u8>,
    pub(crate) values: Vec<u8>,
}

impl PartSink {
    /// A part's store; `first_chunk` where it owns KT's chunk 0.
    pub(crate) fn new(first_chunk: bool) -> Self {
        PartSink {
            wants_first_chunk: first_chunk,
            ..PartSink::default()
        }
    }
}

impl Sink for PartSink {
    fn wants_first_chunk(&self) -> bool {
        self.wants_first_chunk
    }
    fn absorb_message(&mut self, bytes: &[u8]) {
        self.wants_first_chunk = false;
        self.first_chunk.extend_from_slice(bytes);
    }
    fn absorb_chaining_values(&mut self, values: &[u8], _count: u64) {
        self.values.extend_from_slice(values);
    }
}

/// One message under way, from piece to piece: its last node (or a part's
/// store), the bytes of an unfinished last chunk, and the chaining values
/// of the chunks hashed last, which the last node takes while the workers
/// hash the next ones. It borrows nothing, so that a stream keeps it
/// between updates; a clone (the last node's sponge, the tail and those
/// values) finishes a digest while the original goes on.
pub(crate) struct Walk<S = LastNode> {
    node: S,
    /// The bytes of a last chunk that is not whole (only the message's last
    /// piece ends with one).
    tail: Vec<u8>,
    /// Chaining values not fed to the last node yet, in order.
    pending: Vec<u8>,
    /// Space for the next round's chaining values.
    spare: Vec<u8>,
}

impl<S: Clone> Clone for Walk<S> {
    /// The state, not the space kept for chaining values.
    fn clone(&self) -> Self {
        Walk {
            node: self.node.clone(),
            tail: self.tail.clone(),
            pending: self.pending.clone(),
            spare: Vec::new(),
        }
    }
}

impl Walk {
    pub(crate) fn new(params: &StandardParams) -> Self {
        Walk::with_sink(LastNode::new(params))
    }

    /// The digest: the last chunks (with KT's C ‖ length_encode(|C|), which
    /// ends S) and the last node.
    pub(crate) fn finish(mut self, cx: &Context<'_>) -> Vec<u8> {
        let mut tail = std::mem::take(&mut self.tail);
        tail.extend_from_slice(&suffix(cx.params));
        self.absorb_last_chunks(cx, &tail);
        self.node.finish(cx.params)
    }
}

impl Walk<PartSink> {
    /// The walk of a part's chunks; `first_chunk` where it owns KT's chunk 0.
    pub(crate) fn of_part(first_chunk: bool) -> Self {
        Walk::with_sink(PartSink::new(first_chunk))
    }

    /// What the part keeps: its last chunk (a piece's tail) hashed too.
    pub(crate) fn finish_part(mut self, cx: &Context<'_>) -> PartSink {
        let tail = std::mem::take(&mut self.tail);
        self.absorb_last_chunks(cx, &tail);
        self.node
    }
}

impl<S: Sink> Walk<S> {
    fn with_sink(node: S) -> Self {
        Walk {
            node,
            tail: Vec::new(),
            pending: Vec::new(),
            spare: Vec::new(),
        }
    }

    /// Absorbs the next piece of M (which starts on a chunk boundary).
    pub(crate) fn piece(&mut self, cx: &Context<'_>, bytes: &[u8]) {
        debug_assert!(
            self.tail.is_empty(),
            "only the last piece is not whole chunks"
        );
        if cx.params.standard().family() == Family::TurboShake {
            let node = &mut self.node;
            cx.workers.run(|| node.absorb_message(bytes));
            return;
        }
        let whole = bytes.len() / cx.chunk_len * cx.chunk_len;
        let (mut chunks, tail) = bytes.split_at(whole);
        self.tail.extend_from_slice(tail);
        if self.node.wants_first_chunk() && !chunks.is_empty() {
            let (first, rest) = chunks.split_at(cx.chunk_len);
            self.node.absorb_message(first);
            chunks = rest;
        }
        let count = chunks.len() / cx.chunk_len;
        let hashed = self.absorb_chunks(cx, count, |range, values| {
            let bytes = &chunks[range.start * cx.chunk_len..range.end * cx.chunk_len];
            cx.chaining_values(bytes, values);
            Ok::<(), std::convert::Infallible>(())
        });
        let Ok(()) = hashed;
    }

    /// Absorbs the next piece of M (which starts on a chunk boundary),
    /// `len` bytes of `input` from `offset`, each task of the workers
    /// reading its own run of chunks. Not for TurboSHAKE, which has none.
    fn piece_from_file(
        &mut self,
        cx: &Context<'_>,
        input: &InputFile,
        mut offset: u64,
        len: usize,
    ) -> Result<(), HashError> {
        debug_assert!(
            self.tail.is_empty(),
            "only the last piece is not whole chunks"
        );
        let chunk_len = cx.chunk_len;
        let mut count = len / chunk_len;
        let whole = count * chunk_len;
        if whole < len {
            let mut tail = vec![0u8; len - whole];
            input.read_exact_at(&mut tail, offset + whole as u64)?;
            self.tail = tail;
        }
        if self.node.wants_first_chunk() && count > 0 {
            let mut first = vec![0u8; chunk_len];
            input.read_exact_at(&mut first, offset)?;
            self.node.absorb_message(&first);
            offset += chunk_len as u64;
            count -= 1;
        }
        self.absorb_chunks(cx, count, |range, values| {
            let at = offset + (range.start * chunk_len) as u64;
            cx.chaining_values_of_file(input, at, values)
        })
    }

    /// Hashes `count` whole chunks side by side, in rounds whose chaining
    /// values fit [`MAX_VALUES_LEN`]: `hash(range, values)` writes the
    /// values of the chunks `range` (counted from the first of them) on the
    /// workers, while one of them feeds the round before to the last node.
    fn absorb_chunks<E: Send>(
        &mut self,
        cx: &Context<'_>,
        count: usize,
        hash: impl Fn(Range<usize>, &mut [u8]) -> Result<(), E> + Sync,
    ) -> Result<(), E> {
        let cv_len = cx.params.standard().chaining_len();
        let mut from = 0;
        while from < count {
            let to = count.min(from + cx.chunks_per_round());
            let mut values = std::mem::take(&mut self.spare);
            values.resize((to - from) * cv_len, 0);
            let (node, pending) = (&mut self.node, &self.pending);
            let absorb = || node.absorb_chaining_values(pending, (pending.len() / cv_len) as u64);
            let hashed = cx.workers.join(absorb, || hash(from..to, &mut values)).1;
            // The values before are in the node now, these are next.
            self.spare = std::mem::replace(&mut self.pending, values);
            self.spare.clear();
            hashed?;
            from = to;
        }
        Ok(())
    }

    /// Feeds the chaining values not fed yet to the last node.
    fn flush(&mut self, cv_len: usize) {
        let count = (self.pending.len() / cv_len) as u64;
        self.node.absorb_chaining_values(&self.pending, count);
        self.pending.clear();
    }

    /// Whether KT's next chunk is its first, which the last node takes whole.
    pub(crate) fn wants_first_chunk(&self) -> bool {
        self.node.wants_first_chunk()
    }

    /// The chaining values of the next `values.len() / c` chunks, computed
    /// elsewhere (a GPU).
    pub(crate) fn absorb_values(&mut self, cx: &Context<'_>, values: &[u8]) {
        let cv_len = cx.params.standard().chaining_len();
        self.flush(cv_len);
        let count = values.len() / cv_len;
        self.node.absorb_chaining_values(values, count as u64);
    }

    /// Feeds the sink every chaining value pending, then the chunks of
    /// `tail` (the last, which may be short): KT's first whole where the
    /// sink wants it, the others' chaining values.
    fn absorb_last_chunks(&mut self, cx: &Context<'_>, tail: &[u8]) {
        let cv_len = cx.params.standard().chaining_len();
        self.flush(cv_len);
        for chunk in tail.chunks(cx.chunk_len) {
            if self.node.wants_first_chunk() {
                self.node.absorb_message(chunk);
            } else {
                let mut value = vec![0u8; cv_len];
                cx.cpu
                    .chaining_values(&cx.leaf(), chunk, chunk.len(), &mut value);
                self.node.absorb_chaining_values(&value, 1);
            }
        }
    }
}

/// Bytes hashed and time spent, per engine.
#[derive(Clone, Copy, Debug, Default)]
struct Tally {
    bytes: u64,
    busy: Duration,
}

/// Chaining values on their way to the last node, in the message's order.
enum Pending {
    /// The CPU's, ready.
    Ready(Vec<u8>),
    /// The next submission of GPU `k`.
    Gpu(usize),
}

/// A GPU taking part.
struct Gpu<'a> {
    engine: Box<dyn ChunkEngine + 'a>,
    tally: Tally,
}

/// One input under way on the CPU and on GPUs: the walk, what it runs
/// with, and the engines.
struct Shared<'a, 'j, 'p, S: Sink> {
    cx: Context<'p>,
    walk: Walk<S>,
    gpus: Vec<Gpu<'a>>,
    joiners: &'j mut dyn ChunkJoiners<'a>,
    split: Split,
    cpu_tally: Tally,
    /// Values waiting for a GPU's before them.
    pending: VecDeque<Pending>,
    /// A file's bytes read for the CPU (pieces that come unread).
    buffer: Vec<u8>,
    message_len: u64,
    total_len: Option<u64>,
    started: Instant,
    progress: &'p dyn Progress,
}

impl<'a, 'j, 'p, S: Sink> Shared<'a, 'j, 'p, S> {
    fn new(
        cx: Context<'p>,
        walk: Walk<S>,
        engines: Engines<'a, 'j>,
        total_len: Option<u64>,
        progress: &'p dyn Progress,
    ) -> Self {
        let gpus = engines
            .gpus
            .into_iter()
            .map(|engine| Gpu {
                engine,
                tally: Tally::default(),
            })
            .collect();
        Shared {
            walk,
            cx,
            gpus,
            joiners: engines.joiners,
            split: engines.split,
            cpu_tally: Tally::default(),
            pending: VecDeque::new(),
            buffer: Vec::new(),
            message_len: 0,
            total_len,
            started: Instant::now(),
            progress,
        }
    }

    /// Absorbs the next piece of M (which starts on a chunk boundary).
    fn piece(&mut self, piece: Piece<'_>) -> Result<(), HashError> {
        let len = piece.len();
        if self.cx.leaf.is_some() {
            self.poll_joiners()?;
        }
        let start = Instant::now();
        if self.gpus.is_empty() {
            // The CPU alone (TurboSHAKE always): the walk's own path.
            match piece {
                Piece::Unread { input, offset, len } if self.cx.leaf.is_some() => {
                    self.walk.piece_from_file(&self.cx, input, offset, len)?;
                }
                _ => {
                    let mut buffer = std::mem::take(&mut self.buffer);
                    let bytes = Bytes::of(piece).slice(0..len, &mut buffer)?;
                    self.walk.piece(&self.cx, bytes);
                    self.buffer = buffer;
                }
            }
            let time = start.elapsed();
            // The bytes of an unfinished last chunk are counted when the
            // walk finishes.
            self.cpu_tally.bytes += (len - self.walk.tail.len()) as u64;
            self.cpu_tally.busy += time;
            // The CPU's rate alone is the GPUs' first measure, if they join.
            self.split.record(&[len], &[time]);
            self.message_len += len as u64;
            return Ok(());
        }
        debug_assert!(
            self.walk.tail.is_empty(),
            "only the last piece is not whole chunks"
        );
        let bytes = Bytes::of(piece);
        let chunk_len = self.cx.chunk_len;
        let whole = len / chunk_len * chunk_len;
        if whole < len {
            let mut buffer = Vec::new();
            self.walk.tail = bytes.slice(whole..len, &mut buffer)?.to_vec();
        }
        let mut from = 0;
        if self.walk.wants_first_chunk() && whole > 0 {
            let mut buffer = Vec::new();
            let first = bytes.slice(0..chunk_len, &mut buffer)?;
            self.walk.node.absorb_message(first);
            self.cpu_tally.bytes += chunk_len as u64;
            from = chunk_len;
        }
        self.cpu_tally.busy += start.elapsed();
        // In rounds whose chaining values fit MAX_VALUES_LEN: the CPU's may
        // wait for a GPU's before them.
        let round = self.cx.chunks_per_round() * chunk_len;
        while from < whole {
            let to = whole.min(from + round);
            self.round(bytes, from..to)?;
            from = to;
        }
        self.message_len += len as u64;
        self.progress.engines(&self.shares());
        Ok(())
    }

    /// Shares the whole chunks `range` of the piece between the engines by
    /// their rates.
    fn round(&mut self, bytes: Bytes<'_>, range: Range<usize>) -> Result<(), HashError> {
        let chunk_len = self.cx.chunk_len;
        let count = range.len() / chunk_len;
        let counts = self.split.counts(count, self.gpus.len());
        // Engine k (the CPU first) takes bytes [bounds[k], bounds[k + 1]).
        let mut bounds = vec![range.start];
        for c in &counts {
            bounds.push(bounds.last().expect("starts with one") + c * chunk_len);
        }
        let start = Instant::now();
        // The values ready now are fed to the last node beside this round.
        let ready = self.take_ready(false)?;
        let (cpu_values, times) = self.absorb_shared(bytes, &bounds, ready)?;
        let sizes: Vec<usize> = bounds.windows(2).map(|w| w[1] - w[0]).collect();
        self.cpu_tally.busy += times[0];
        if sizes[0] > 0 {
            self.cpu_tally.bytes += sizes[0] as u64;
            self.pending.push_back(Pending::Ready(cpu_values));
        }
        for (k, gpu) in self.gpus.iter_mut().enumerate() {
            if sizes[k + 1] > 0 {
                gpu.tally.bytes += sizes[k + 1] as u64;
                gpu.tally.busy += times[k + 1];
                self.pending.push_back(Pending::Gpu(k));
            }
        }
        self.split.record(&sizes, &times);
        self.split.record_round(range.len(), start.elapsed());
        self.trace(range.start, &sizes, &times);
        Ok(())
    }

    /// The chaining values at the front of `pending` that are ready, in
    /// order, taken out of it; with `wait`, all of them.
    fn take_ready(&mut self, wait: bool) -> Result<Vec<Vec<u8>>, HashError> {
        let mut ready = Vec::new();
        while let Some(front) = self.pending.front_mut() {
            match front {
                Pending::Ready(values) => ready.push(std::mem::take(values)),
                Pending::Gpu(k) => match self.gpus[*k].engine.take(wait)? {
                    Some(values) => ready.push(values),
                    None => break,
                },
            }
            self.pending.pop_front();
        }
        Ok(ready)
    }

    /// Adds the engines that are ready to join.
    fn poll_joiners(&mut self) -> Result<(), HashError> {
        let standing = Standing {
            message_len: self.message_len,
            remaining: self.total_len.map(|t| t.saturating_sub(self.message_len)),
            elapsed: self.started.elapsed(),
        };
        for engine in self.joiners.poll(&standing)? {
            trace::trace(|| format!("{} joins at {}", engine.name(), self.message_len));
            self.gpus.push(Gpu {
                engine,
                tally: Tally::default(),
            });
        }
        Ok(())
    }

    /// Hands each GPU its run of the piece (`bounds[k + 1]..bounds[k + 2]`
    /// to GPU k) and hashes the CPU's (`bounds[0]..bounds[1]`) meanwhile,
    /// while a thread of the global pool feeds the values `ready` to the
    /// last node (on the walk's thread, between rounds, that held KT128 on
    /// the H200's GPU at 0.63 × the pinned copy: 62–70 ms of 8 GiB's 285):
    /// the CPU's chaining values, and each engine's time.
    fn absorb_shared(
        &mut self,
        bytes: Bytes<'_>,
        bounds: &[usize],
        ready: Vec<Vec<u8>>,
    ) -> Result<(Vec<u8>, Vec<Duration>), HashError> {
        let mut times = vec![Duration::ZERO; bounds.len() - 1];
        let (cpu_time, gpu_times) = times.split_first_mut().expect("the CPU's is there");
        let Shared {
            cx,
            walk,
            gpus,
            buffer,
            ..
        } = self;
        let cx = &*cx;
        let any_ready = !ready.is_empty();
        let mut feed = move || {
            let start = Instant::now();
            for values in &ready {
                walk.absorb_values(cx, values);
            }
            trace::trace(|| {
                let ms = start.elapsed().as_secs_f64() * 1e3;
                format!("last node fed {} runs of values in {ms:.3} ms", ready.len())
            });
        };
        let cpu_range = bounds[0]..bounds[1];
        let cv_len = cx.params.standard().chaining_len();
        let mut values = vec![0u8; cpu_range.len() / cx.chunk_len * cv_len];
        let mut cpu_part = || -> Result<(), HashError> {
            if cpu_range.is_empty() {
                return Ok(());
            }
            let start = Instant::now();
            match (bytes.mapped, bytes.chunks(cpu_range.clone())) {
                // Unread: each task reads its own chunks.
                (None, ChunkBytes::File { input, offset, .. }) => {
                    cx.chaining_values_of_file(input, offset, &mut values)?;
                }
                _ => {
                    let run = bytes.slice(cpu_range.clone(), buffer)?;
                    cx.chaining_values(run, &mut values);
                }
            }
            *cpu_time = start.elapsed();
            Ok(())
        };
        let mut submits: Vec<_> = gpus
            .iter_mut()
            .zip(gpu_times.iter_mut())
            .zip(bounds[1..].windows(2))
            .filter(|(_, w)| w[0] < w[1])
            .map(|((gpu, time), w)| {
                let run = bytes.chunks(w[0]..w[1]);
                move || -> Result<(), HashError> {
                    let start = Instant::now();
                    gpu.engine.submit(run)?;
                    *time = start.elapsed();
                    Ok(())
                }
            })
            .collect();
        let mut results: Vec<Result<(), HashError>> = submits.iter().map(|_| Ok(())).collect();
        let mut result = Ok(());
        rayon::in_place_scope(|s| {
            if any_ready {
                s.spawn(move |_| feed());
            }
            if submits.len() == 1 && cpu_range.is_empty() {
                // One GPU alone: staged from this thread.
                result = submits[0]();
                return;
            }
            // The GPUs' staging on the global rayon pool's long-lived
            // threads (a thread's first CUDA call sets up driver state for
            // it), the CPU's chunks on this one.
            for (submit, out) in submits.iter_mut().zip(results.iter_mut()) {
                s.spawn(move |_| *out = submit());
            }
            result = cpu_part();
        });
        results.into_iter().fold(result, Result::and)?;
        Ok((values, times))
    }

    /// Feeds the last node every value still pending, in order.
    fn drain(&mut self) -> Result<(), HashError> {
        for values in self.take_ready(true)? {
            self.walk.absorb_values(&self.cx, &values);
        }
        Ok(())
    }

    /// Each engine's share so far, the CPU first.
    fn shares(&self) -> Vec<EngineShare> {
        let cpu = EngineShare {
            engine: "cpu".into(),
            bytes: self.cpu_tally.bytes,
            busy: self.cpu_tally.busy,
        };
        let gpus = self.gpus.iter().map(|g| EngineShare {
            engine: g.engine.name(),
            bytes: g.tally.bytes,
            busy: g.tally.busy,
        });
        std::iter::once(cpu).chain(gpus).collect()
    }

    /// `TREEHASH_TRACE=1`: each engine's bytes and time in a round.
    fn trace(&self, at: usize, sizes: &[usize], times: &[Duration]) {
        trace::trace(|| {
            let mut line = format!("chunks from {}:", self.message_len + at as u64);
            let names =
                std::iter::once("cpu".to_string()).chain(self.gpus.iter().map(|g| g.engine.name()));
            for ((name, size), time) in names.zip(sizes).zip(times) {
                line += &format!(" {name} {size} B {:.3} ms;", time.as_secs_f64() * 1e3);
            }
            line
        });
    }

    /// Every chaining value fed in order, the last chunk's bytes counted:
    /// each engine's share, and the GPUs' copies and kernels, busy.
    fn settle(&mut self) -> Result<(Vec<EngineShare>, Duration, Duration), HashError> {
        self.drain()?;
        self.cpu_tally.bytes += self.walk.tail.len() as u64;
        let shares = self
            .shares()
            .into_iter()
            .filter(|s| s.engine == "cpu" || s.bytes > 0)
            .collect();
        let (mut copy_busy, mut kernel_busy) = (Duration::ZERO, Duration::ZERO);
        for gpu in &self.gpus {
            let (copies, kernels) = gpu.engine.busy();
            copy_busy += copies;
            kernel_busy += kernels;
        }
        Ok((shares, copy_busy, kernel_busy))
    }
}

impl Shared<'_, '_, '_, LastNode> {
    /// The digest: every chaining value fed in order, then the last chunks
    /// and the last node.
    fn finish(mut self, bytes: u64) -> Result<Walked, HashError> {
        let (shares, copy_busy, kernel_busy) = self.settle()?;
        let digest = self.walk.finish(&self.cx);
        Ok(Walked {
            digest,
            bytes,
            shares,
            copy_busy,
            kernel_busy,
        })
    }
}

impl Shared<'_, '_, '_, PartSink> {
    /// What the part keeps: every chaining value in order, the last chunk's too.
    fn finish_part(mut self) -> Result<PartWalked, HashError> {
        let (shares, copy_busy, kernel_busy) = self.settle()?;
        let sink = self.walk.finish_part(&self.cx);
        Ok(PartWalked {
            sink,
            shares,
            copy_busy,
            kernel_busy,
        })
    }
}

/// Pieces an engine hashes before its rate is taken as measured: its first
/// is slower (threads woken, a GPU's buffers for chaining values made).
const PIECES_BEFORE_RATE: u32 = 1;
/// The weight of a piece's rate in an engine's smoothed rate.
const RATE_WEIGHT: f64 = 0.5;

/// An engine's rate: bytes a second, smoothed over its recent pieces.
#[derive(Clone, Copy, Debug, Default)]
struct Rate {
    pieces: u32,
    bytes_per_second: Option<f64>,
}

impl Rate {
    fn record(&mut self, bytes: usize, time: Duration) {
        if bytes == 0 || time.is_zero() {
            return;
        }
        self.pieces += 1;
        if self.pieces <= PIECES_BEFORE_RATE {
            return;
        }
        let rate = bytes as f64 / time.as_secs_f64();
        self.bytes_per_second = Some(match self.bytes_per_second {
            Some(before) => RATE_WEIGHT * rate + (1.0 - RATE_WEIGHT) * before,
            None => rate,
        });
    }
}

/// How each piece's chunks are shared between the CPU and the GPUs: in
/// proportion to each engine's measured rate (bytes a second over its recent
/// pieces, each measured while the others ran beside it), so that all
/// finish a piece together. The CPU, and the GPUs whose staging it does,
/// share the host's cores and memory, so the rates move with the split; a
/// piece later they are measured again. An engine not measured yet is taken
/// to run as fast as the mean of those that are (at first an even share).
/// Under `--backend gpu` the CPU takes no chunk; under auto, whether it does
/// once GPUs take part is tried ([`RoleTrial`]).
pub(crate) struct Split {
    cpu_takes_chunks: bool,
    /// The CPU's, then each GPU's.
    rates: Vec<Rate>,
    trial: RoleTrial,
    /// Tests: each piece's weights, by the engines' count.
    #[cfg(test)]
    script: Option<Box<dyn FnMut(usize) -> Vec<f64> + Send>>,
}

impl Split {
    /// A split where the CPU takes chunks or not (it takes them all while
    /// no GPU does).
    pub(crate) fn new(cpu_takes_chunks: bool) -> Split {
        Split {
            cpu_takes_chunks,
            rates: vec![Rate::default()],
            trial: RoleTrial::default(),
            #[cfg(test)]
            script: None,
        }
    }

    /// Whether the CPU takes chunks when GPUs take part.
    fn cpu_takes_chunks(&self) -> bool {
        self.cpu_takes_chunks
    }

    /// Each engine's weight for the next piece: its rate, or the mean of
    /// the measured rates.
    fn weights(&mut self, gpus: usize) -> Vec<f64> {
        self.rates.resize(1 + gpus, Rate::default());
        #[cfg(test)]
        if let Some(script) = &mut self.script {
            return script(1 + gpus);
        }
        let measured: Vec<f64> = self
            .rates
            .iter()
            .filter_map(|r| r.bytes_per_second)
            .collect();
        let guess = if measured.is_empty() {
            1.0
        } else {
            measured.iter().sum::<f64>() / measured.len() as f64
        };
        let mut weights: Vec<f64> = self
            .rates
            .iter()
            .map(|r| r.bytes_per_second.unwrap_or(guess))
            .collect();
        if gpus > 0 && (!self.cpu_takes_chunks || self.trial.role() == CpuRole::Stages) {
            weights[0] = 0.0;
        }
        weights
    }

    /// How many of `count` chunks each engine takes: the CPU first, then
    /// each of `gpus` GPUs.
    fn counts(&mut self, count: usize, gpus: usize) -> Vec<usize> {
        let weights = self.weights(gpus);
        let total: f64 = weights.iter().sum();
        if gpus == 0 || total <= 0.0 || !total.is_finite() {
            let mut counts = vec![0; 1 + gpus];
            counts[0] = count;
            return counts;
        }
        let mut counts = Vec::with_capacity(weights.len());
        let (mut sum, mut given) = (0.0, 0);
        for w in &weights {
            sum += w.max(0.0);
            let upto = ((count as f64 * sum / total).round() as usize).min(count);
            counts.push(upto - given);
            given = upto;
        }
        *counts.last_mut().expect("one engine at least") += count - given;
        counts
    }

    /// Notes a round shared with GPUs: `bytes` of M in `wall` from its start
    /// to its end.
    fn record_round(&mut self, bytes: usize, wall: Duration) {
        if self.cpu_takes_chunks {
            self.trial.record(bytes as u64, wall);
        }
    }

    /// Notes what each engine (the CPU first) hashed in the last piece and
    /// the time it took.
    fn record(&mut self, bytes: &[usize], times: &[Duration]) {
        if self.rates.len() < bytes.len() {
            self.rates.resize(bytes.len(), Rate::default());
        }
        for ((rate, &b), &t) in self.rates.iter_mut().zip(bytes).zip(times) {
            rate.record(b, t);
        }
    }
}

/// What the CPU does while GPUs take part in an input under auto.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CpuRole {
    /// It hashes a share of each round's chunks, by the rates.
    Shares,
    /// It leaves every chunk to the GPUs, its cores to their staging.
    Stages,
}

/// Bytes of M each role is tried over, in whole rounds, once GPUs take
/// part.
const TRIAL_BYTES: u64 = 1 << 30;
/// Rounds a role runs before its trial is measured: the rates of a split
/// just changed take a round or two to settle.
const SETTLE_ROUNDS: u32 = 2;

/// Which of the two roles moves more bytes a second, tried in turn once GPUs
/// take part: each over [`TRIAL_BYTES`] of whole rounds (after
/// [`SETTLE_ROUNDS`]), then the faster kept for the rest of the input. Shares measured
/// by rate are not enough: on the H200 machine every split of KT128 with the
/// CPU hashing ran at 31–36 GB/s, below both the GPU alone (45) and, for
/// most splits, the CPU alone (33), because the GPU's staging and the CPU's
/// hashing take the same 16 vCPUs and memory (docs/PERFORMANCE.md). Where
/// the CPU is the stronger engine, sharing wins and is kept.
#[derive(Debug, Default)]
struct RoleTrial {
    step: TrialStep,
    /// Rounds the current step has run to settle, up to [`SETTLE_ROUNDS`].
    settled: u32,
    bytes: u64,
    wall: Duration,
}

/// Where a [`RoleTrial`] stands.
#[derive(Clone, Copy, Debug, Default)]
enum TrialStep {
    /// Sharing is tried first.
    #[default]
    Shares,
    /// Staging only is tried, sharing having moved `shares` bytes a second.
    Stages { shares: f64 },
    /// Both were tried: this role is kept.
    Kept(CpuRole),
}

impl RoleTrial {
    /// What the CPU does now.
    fn role(&self) -> CpuRole {
        match self.step {
            TrialStep::Shares => CpuRole::Shares,
            TrialStep::Stages { .. } => CpuRole::Stages,
            TrialStep::Kept(role) => role,
        }
    }

    /// Notes a round of `bytes` that took `wall`, and moves the trial on.
    fn record(&mut self, bytes: u64, wall: Duration) {
        if let TrialStep::Kept(_) = self.step {
            return;
        }
        if self.settled < SETTLE_ROUNDS {
            self.settled += 1;
            return;
        }
        self.bytes += bytes;
        self.wall += wall;
        if self.bytes < TRIAL_BYTES || self.wall.is_zero() {
            return;
        }
        let rate = self.bytes as f64 / self.wall.as_secs_f64();
        (self.bytes, self.wall, self.settled) = (0, Duration::ZERO, 0);
        self.step = match self.step {
            TrialStep::Shares => TrialStep::Stages { shares: rate },
            TrialStep::Stages { shares } => {
                let kept = if shares >= rate {
                    CpuRole::Shares
                } else {
                    CpuRole::Stages
                };
                trace::trace(|| {
                    format!(
                        "CPU role: {kept:?} (sharing {:.1} GB/s, staging only {:.1} GB/s)",
                        shares / 1e9,
                        rate / 1e9
                    )
                });
                TrialStep::Kept(kept)
            }
            kept @ TrialStep::Kept(_) => kept,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::sync::{Arc, Mutex};

    use crate::cpu::CpuPath;
    use crate::progress::NoProgress;
    use crate::reference;
    use crate::standard::{Standard, StandardParams};
    use crate::test_rng::{Rng, bytes};

    /// A chunk engine on the CPU that answers late: a submission's values
    /// come back only `lag` takes after it was made, so the walk's order
    /// and its waits are exercised as with a GPU's ring.
    struct LateEngine {
        leaf: LeafSpec,
        chunk_len: usize,
        lag: usize,
        /// Submissions not taken: their values and the takes they waited.
        queue: VecDeque<(Vec<u8>, usize)>,
        /// Every submission's bytes, for the test to check.
        seen: Arc<Mutex<u64>>,
    }

    impl ChunkEngine for LateEngine {
        fn name(&self) -> String {
            "late".into()
        }

        fn submit(&mut self, bytes: ChunkBytes<'_>) -> Result<(), HashError> {
            let mut buffer = Vec::new();
            let data = bytes.read(&mut buffer)?;
            assert_eq!(data.len() % self.chunk_len, 0, "whole chunks");
            let mut values = vec![0u8; data.len() / self.chunk_len * self.leaf.output_len()];
            crate::cpu::chunks::chaining_values(
                CpuPath::Portable,
                &self.leaf,
                data,
                self.chunk_len,
                &mut values,
            )?;
            *self.seen.lock().unwrap() += data.len() as u64;
            self.queue.push_back((values, 0));
            Ok(())
        }

        fn take(&mut self, wait: bool) -> Result<Option<Vec<u8>>, HashError> {
            let front = self.queue.front_mut().expect("a submission to take");
            if !wait && front.1 < self.lag {
                front.1 += 1;
                return Ok(None);
            }
            Ok(self.queue.pop_front().map(|(values, _)| values))
        }

        fn busy(&self) -> (Duration, Duration) {
            (Duration::ZERO, Duration::ZERO)
        }
    }

    /// Joins one engine at a given piece.
    struct JoinAt {
        at_piece: u32,
        polls: u32,
        engine: Option<Box<dyn ChunkEngine>>,
    }

    impl<'a> ChunkJoiners<'a> for JoinAt {
        fn poll(&mut self, _now: &Standing) -> Result<Vec<Box<dyn ChunkEngine + 'a>>, HashError> {
            self.polls += 1;
            if self.polls > self.at_piece
                && let Some(engine) = self.engine.take()
            {
                return Ok(vec![engine]);
            }
            Ok(Vec::new())
        }
    }

    fn cases() -> Vec<StandardParams> {
        vec![
            StandardParams::new(Standard::Kt128),
            StandardParams::new(Standard::Kt256)
                .with_customization(vec![7; 9000])
                .unwrap(),
            StandardParams::new(Standard::ParallelHash128)
                .with_block_size(13)
                .unwrap(),
            StandardParams::new(Standard::ParallelHash256)
                .with_block_size(1000)
                .unwrap()
                .with_customization(b"S".to_vec())
                .unwrap(),
            StandardParams::new(Standard::ParallelHash128)
                .with_block_size(1)
                .unwrap(),
        ]
    }

    /// Whatever the split of each piece (weights scripted at random, zeros
    /// included: the CPU alone, a GPU alone, any share), however late the
    /// engines answer and whenever one joins, the digest is the reference's.
    #[test]
    fn any_split_of_the_chunks_gives_the_reference_digest() {
        let cpu = CpuBackend::new(Some(2), Some(8192), CpuPath::Auto).unwrap();
        for (case, params) in cases().into_iter().enumerate() {
            let b = chunk_len(&params);
            let leaf = params.standard().leaf_spec().unwrap();
            for (round, len) in [0, 1, b, 3 * b - 1, 40 * b + 3, 20_000, 150_000]
                .into_iter()
                .enumerate()
            {
                let message = bytes(len, (case * 100 + round) as u64);
                let want = reference_digest(&params, &message);
                for (lag, join_at) in [(0, 0), (2, 0), (1, 3), (5, 1)] {
                    let seen = Arc::new(Mutex::new(0));
                    let late = |lag| -> Box<dyn ChunkEngine> {
                        Box::new(LateEngine {
                            leaf,
                            chunk_len: b,
                            lag,
                            queue: VecDeque::new(),
                            seen: seen.clone(),
                        })
                    };
                    let mut joiners = JoinAt {
                        at_piece: join_at,
                        polls: 0,
                        engine: Some(late(lag + 1)),
                    };
                    let mut split = Split::new(true);
                    let mut mix = Rng((lag * 10) as u64 + u64::from(join_at) + len as u64);
                    split.script = Some(Box::new(move |n| {
                        (0..n)
                            .map(|_| [0.0, 0.0, 1.0, 3.0, 0.5][(mix.next() % 5) as usize])
                            .collect()
                    }));
                    let engines = Engines {
                        gpus: vec![late(lag)],
                        joiners: &mut joiners,
                        split,
                    };
                    let mut input = Input::Bytes(&message);
                    let out = hash(&params, &mut input, &cpu, engines, 8192, &NoProgress).unwrap();
                    let what = format!("{} of {len} bytes, lag {lag}", params.label());
                    assert_eq!(out.digest, want, "{what}");
                    assert_eq!(out.bytes, len as u64);
                    let shared: u64 = out.shares.iter().map(|s| s.bytes).sum();
                    assert_eq!(shared, len as u64, "{what}: every byte in one share");
                    let late_bytes: u64 = out
                        .shares
                        .iter()
                        .filter(|s| s.engine == "late")
                        .map(|s| s.bytes)
                        .sum();
                    assert_eq!(late_bytes, *seen.lock().unwrap(), "{what}");
                }
            }
        }
    }

    /// Pieces whose chaining values exceed `MAX_VALUES_LEN` (ParallelHash
    /// with B = 1: 32 bytes a byte) are shared in rounds, the engines
    /// answering late: the reference's digest.
    #[test]
    fn pieces_of_many_small_chunks_are_shared_in_rounds() {
        let cpu = CpuBackend::new(Some(2), None, CpuPath::Auto).unwrap();
        let params = StandardParams::new(Standard::ParallelHash128)
            .with_block_size(1)
            .unwrap();
        let leaf = params.standard().leaf_spec().unwrap();
        let round = Context::new(&params, &cpu).chunks_per_round();
        assert_eq!(round, MAX_VALUES_LEN / 32);
        let message = bytes(3 * round + 1234, 9);
        let seen = Arc::new(Mutex::new(0));
        let mut split = Split::new(true);
        let mut mix = Rng(5);
        split.script = Some(Box::new(move |n| {
            (0..n).map(|_| (mix.next() % 4) as f64).collect()
        }));
        let engines = Engines {
            gpus: vec![Box::new(LateEngine {
                leaf,
                chunk_len: 1,
                lag: 3,
                queue: VecDeque::new(),
                seen: seen.clone(),
            })],
            joiners: &mut NoChunkJoiners,
            split,
        };
        let mut input = Input::Bytes(&message);
        let out = hash(
            &params,
            &mut input,
            &cpu,
            engines,
            2 * round + 7,
            &NoProgress,
        )
        .unwrap();
        assert_eq!(out.digest, reference_digest(&params, &message));
        assert!(*seen.lock().unwrap() > 0);
    }

    /// Under `--backend gpu` the CPU hashes no chunk: only KT's first one
    /// and the last ones, and ParallelHash's last.
    #[test]
    fn a_split_without_the_cpu_gives_it_no_chunk() {
        let cpu = CpuBackend::new(Some(2), Some(16384), CpuPath::Auto).unwrap();
        for params in cases() {
            let b = chunk_len(&params);
            let leaf = params.standard().leaf_spec().unwrap();
            let message = bytes(30 * b + 5, 3);
            let seen = Arc::new(Mutex::new(0));
            let engines = Engines {
                gpus: vec![Box::new(LateEngine {
                    leaf,
                    chunk_len: b,
                    lag: 1,
                    queue: VecDeque::new(),
                    seen: seen.clone(),
                })],
                joiners: &mut NoChunkJoiners,
                split: Split::new(false),
            };
            let mut input = Input::Bytes(&message);
            let out = hash(&params, &mut input, &cpu, engines, 16384, &NoProgress).unwrap();
            assert_eq!(out.digest, reference_digest(&params, &message));
            let first = if params.standard().family() == Family::Kangaroo {
                b
            } else {
                0
            };
            let cpu_bytes = out.shares[0].bytes;
            assert_eq!(out.shares[0].engine, "cpu");
            let tail = message.len() % b;
            assert_eq!(cpu_bytes as usize, first + tail, "{}", params.label());
            assert_eq!(*seen.lock().unwrap(), message.len() as u64 - cpu_bytes);
        }
    }

    /// Files: mapped pieces shared (the CPU hashes from the mapping, the
    /// engines read their runs with pread), and unread pieces where the CPU
    /// takes no chunk (it reads KT's first chunk and the last bytes itself).
    #[test]
    fn files_shared_or_read_by_the_engines_give_the_reference_digest() {
        use crate::input::Source;
        let cpu = CpuBackend::new(Some(2), Some(3 * 8192), CpuPath::Auto).unwrap();
        let dir = tempfile::tempdir().unwrap();
        for params in cases() {
            let b = chunk_len(&params);
            let leaf = params.standard().leaf_spec().unwrap();
            for len in [0, b - 1, 7 * b + 1, 300_001] {
                let message = bytes(len, len as u64);
                let path = dir.path().join("m");
                std::fs::write(&path, &message).unwrap();
                let want = reference_digest(&params, &message);
                for cpu_takes_chunks in [true, false] {
                    let Source::File(file) = Source::open(&path).unwrap() else {
                        // An empty file is a stream.
                        assert_eq!(len, 0);
                        continue;
                    };
                    let seen = Arc::new(Mutex::new(0));
                    let engines = Engines {
                        gpus: vec![Box::new(LateEngine {
                            leaf,
                            chunk_len: b,
                            lag: 2,
                            queue: VecDeque::new(),
                            seen: seen.clone(),
                        })],
                        joiners: &mut NoChunkJoiners,
                        split: Split::new(cpu_takes_chunks),
                    };
                    let mut input = Input::File(&file);
                    let out = hash(&params, &mut input, &cpu, engines, 3 * 8192, &NoProgress);
                    let out = out.unwrap();
                    let what = format!("{} file of {len}, CPU {cpu_takes_chunks}", params.label());
                    assert_eq!(out.digest, want, "{what}");
                    let shared: u64 = out.shares.iter().map(|s| s.bytes).sum();
                    assert_eq!(shared, len as u64, "{what}");
                }
            }
        }
    }

    /// A file's chunks read per task on the CPU, each round's chaining
    /// values fed to the last node beside the next round, in pieces of a
    /// few chunks, on the pool and inline: the reference's digest, on
    /// lengths around the chunk and across many pieces.
    #[test]
    fn a_file_read_per_task_gives_the_reference_digest() {
        use crate::input::Source;
        let dir = tempfile::tempdir().unwrap();
        for (case, params) in cases().into_iter().enumerate() {
            let b = chunk_len(&params);
            let lens = [1, b - 1, b, b + 1, 3 * b - 1, 40 * b + 3, 300_001];
            // (An empty file is a stream.)
            for (round, len) in lens.into_iter().filter(|&n| n > 0).enumerate() {
                let message = bytes(len, (case * 100 + round) as u64);
                let path = dir.path().join("m");
                std::fs::write(&path, &message).unwrap();
                let want = reference_digest(&params, &message);
                for (piece, inline) in [(3 * 8192, false), (5 * b, false), (3 * 8192, true)] {
                    let cpu = CpuBackend::new(Some(2), Some(piece), CpuPath::Auto).unwrap();
                    let Source::File(file) = Source::open(&path).unwrap() else {
                        panic!("a regular file");
                    };
                    let run = || {
                        let mut input = Input::File(&file);
                        let mut none = NoChunkJoiners;
                        let engines = Engines::cpu_only(&mut none);
                        hash(&params, &mut input, &cpu, engines, piece, &NoProgress)
                    };
                    let out = if inline { cpu.run_alone(run) } else { run() };
                    let what = format!(
                        "{} of {len} bytes, pieces of {piece}, inline {inline}",
                        params.label()
                    );
                    let out = out.unwrap_or_else(|e| panic!("{what}: {e}"));
                    assert_eq!(out.digest, want, "{what}");
                    assert_eq!(out.bytes, len as u64, "{what}");
                    assert_eq!(out.shares[0].bytes, len as u64, "{what}");
                }
            }
        }
    }

    /// Cuts the file to `to` bytes once the first piece is absorbed.
    struct CutAfterFirstPiece {
        path: std::path::PathBuf,
        to: u64,
        done: std::sync::atomic::AtomicBool,
    }

    impl Progress for CutAfterFirstPiece {
        fn advance(&self, _bytes: u64) {
            if !self.done.swap(true, std::sync::atomic::Ordering::SeqCst) {
                let file = std::fs::File::options()
                    .write(true)
                    .open(&self.path)
                    .unwrap();
                file.set_len(self.to).unwrap();
            }
        }
    }

    /// A file cut short after its first piece: the chunks beyond the cut
    /// are read short, and the input ends in an error, not a digest and not
    /// a crash.
    #[test]
    fn a_file_cut_while_its_chunks_are_hashed_gets_an_error() {
        use crate::input::Source;
        let (len, piece, cut) = (8usize << 20, 1usize << 20, 3u64 << 19);
        let cpu = CpuBackend::new(Some(2), Some(piece), CpuPath::Auto).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let params = StandardParams::new(Standard::Kt128);
        let path = dir.path().join("cut.bin");
        std::fs::write(&path, bytes(len, 5)).unwrap();
        let Source::File(file) = Source::open(&path).unwrap() else {
            panic!("a regular file");
        };
        let progress = CutAfterFirstPiece {
            path: path.clone(),
            to: cut,
            done: std::sync::atomic::AtomicBool::new(false),
        };
        let mut input = Input::File(&file);
        let mut none = NoChunkJoiners;
        let engines = Engines::cpu_only(&mut none);
        let result = hash(&params, &mut input, &cpu, engines, piece, &progress);
        let err = result.err().expect("an error, not a digest");
        assert!(
            err.to_string().contains("shrank from 8388608 to 1572864"),
            "{err}"
        );
    }

    /// A part's chunks ranges of a file, walked on the CPU alone and with an
    /// engine that answers late (as a GPU's) taking any share: KT's first
    /// chunk whole where the range starts at chunk 0, and every other
    /// chunk's chaining value as the reference computes it, whatever the
    /// range (the chunks of S past the file's end hold KT's suffix).
    #[test]
    fn a_part_keeps_its_chunks_values_on_any_engines() {
        use crate::input::Source;
        let cpu = CpuBackend::new(Some(2), Some(3 * 8192), CpuPath::Auto).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut late_bytes = 0;
        for (case, params) in cases().into_iter().enumerate() {
            let b = chunk_len(&params);
            let leaf = params.standard().leaf_spec().unwrap();
            for len in [0, 1, b, 7 * b + 3, 150_000] {
                let message = bytes(len, (case * 10 + len) as u64);
                let path = dir.path().join("m");
                std::fs::write(&path, &message).unwrap();
                // An empty file is a stream: a part has nothing to read.
                let opened = Source::open(&path).unwrap();
                let file = match &opened {
                    Source::File(file) => Some(file),
                    Source::Stream(_) => None,
                };
                let s = [&message[..], &suffix(&params)].concat();
                let n = chunk_count(&params, len as u64);
                assert_eq!(n, s.len().div_ceil(b) as u64);
                let ranges = [0..n, 0..n / 2, n / 3..n, n / 2..n / 2, n.min(1)..n];
                for chunks in ranges {
                    let kt = params.standard().family() == Family::Kangaroo;
                    let first = kt && chunks.start == 0 && !chunks.is_empty();
                    let first_want = if first { &s[..s.len().min(b)] } else { &[][..] };
                    let values_want: Vec<u8> = (chunks.start + u64::from(first)..chunks.end)
                        .flat_map(|i| {
                            let at = i as usize * b;
                            reference_value(&params, &s[at..(at + b).min(s.len())])
                        })
                        .collect();
                    for late in [false, true] {
                        let seen = Arc::new(Mutex::new(0));
                        let mut split = Split::new(true);
                        let mut mix = Rng(len as u64 + chunks.start);
                        split.script = Some(Box::new(move |n| {
                            (0..n).map(|_| (mix.next() % 3) as f64).collect()
                        }));
                        let (gpus, piece_len): (Vec<Box<dyn ChunkEngine>>, usize) = if late {
                            let engine = LateEngine {
                                leaf,
                                chunk_len: b,
                                lag: 2,
                                queue: VecDeque::new(),
                                seen: seen.clone(),
                            };
                            (vec![Box::new(engine)], 3 * b)
                        } else {
                            (Vec::new(), file_piece_len(&params, &cpu))
                        };
                        let engines = Engines {
                            gpus,
                            joiners: &mut NoChunkJoiners,
                            split,
                        };
                        let walked = hash_part_chunks(
                            &params,
                            file,
                            chunks.clone(),
                            &cpu,
                            engines,
                            piece_len,
                            &NoProgress,
                        )
                        .unwrap();
                        let what = format!(
                            "{} of {len} bytes, chunks {chunks:?}, late {late}",
                            params.label()
                        );
                        assert_eq!(walked.sink.first_chunk, first_want, "{what}");
                        assert_eq!(
                            hex::encode(&walked.sink.values),
                            hex::encode(&values_want),
                            "{what}"
                        );
                        let shared: u64 = walked.shares.iter().map(|s| s.bytes).sum();
                        let range_len = (chunks.end as usize * b).min(s.len())
                            - (chunks.start as usize * b).min(s.len());
                        assert_eq!(shared, range_len as u64, "{what}");
                        late_bytes += *seen.lock().unwrap();
                    }
                }
            }
        }
        assert!(late_bytes > 0, "the late engine took no chunk");
    }

    /// The chaining value of one chunk by the reference: KT's
    /// TurboSHAKE(S_i, 0B, c), ParallelHash's SHAKE of the block.
    fn reference_value(p: &StandardParams, chunk: &[u8]) -> Vec<u8> {
        use reference::turboshake::{turboshake128, turboshake256};
        let c = p.standard().chaining_len();
        match p.standard() {
            Standard::Kt128 => turboshake128(chunk, 0x0b, c),
            Standard::Kt256 => turboshake256(chunk, 0x0b, c),
            other => reference::node_function(other.shake(), chunk, c),
        }
    }

    #[test]
    fn counts_follow_the_rates_and_cover_every_chunk() {
        let mut split = Split::new(true);
        // Nothing measured: even shares.
        assert_eq!(split.counts(10, 1), vec![5, 5]);
        assert_eq!(split.counts(7, 0), vec![7]);
        // The CPU measured at 1 GB/s (its first piece left out), a GPU at 3.
        let ms = Duration::from_millis;
        split.record(&[1_000_000, 0], &[ms(1), ms(0)]);
        split.record(&[1_000_000, 3_000_000], &[ms(1), ms(1)]);
        // The GPU's first piece is left out: it runs at the CPU's rate.
        assert_eq!(split.counts(100, 1), vec![50, 50]);
        split.record(&[1_000_000, 3_000_000], &[ms(1), ms(1)]);
        assert_eq!(split.counts(100, 1), vec![25, 75]);
        // A second GPU not measured yet runs at the mean (2 GB/s).
        assert_eq!(split.counts(60, 2), vec![10, 30, 20]);
        for count in 0..50 {
            let counts = split.counts(count, 2);
            assert_eq!(counts.iter().sum::<usize>(), count);
        }
        let mut gpu_only = Split::new(false);
        assert_eq!(gpu_only.counts(9, 2), vec![0, 5, 4]);
        assert_eq!(gpu_only.counts(9, 0), vec![9]);
    }

    /// Runs rounds of half a trial each, `wall` apiece, through the
    /// settling rounds and one whole trial of the current role.
    fn one_trial(split: &mut Split, wall: Duration) {
        let half = (TRIAL_BYTES / 2) as usize;
        for _ in 0..SETTLE_ROUNDS + 2 {
            split.record_round(half, wall);
        }
    }

    #[test]
    fn the_cpu_leaves_its_chunks_to_the_gpus_where_that_is_faster() {
        let ms = Duration::from_millis;
        let mut split = Split::new(true);
        assert_eq!(split.counts(10, 1), vec![5, 5]);
        // Sharing measured at 1 GiB in 40 ms: staging only is tried next.
        one_trial(&mut split, ms(20));
        assert_eq!(split.counts(10, 1), vec![0, 10]);
        // Staging only, 1 GiB in 30 ms, is faster: it is kept for good.
        one_trial(&mut split, ms(15));
        assert_eq!(split.counts(10, 1), vec![0, 10]);
        one_trial(&mut split, ms(100));
        one_trial(&mut split, ms(100));
        assert_eq!(split.counts(10, 1), vec![0, 10]);
        // With no GPU the CPU takes every chunk.
        assert_eq!(split.counts(10, 0), vec![10]);
    }

    #[test]
    fn the_cpu_keeps_its_share_where_sharing_is_faster() {
        let ms = Duration::from_millis;
        let mut split = Split::new(true);
        one_trial(&mut split, ms(15));
        assert_eq!(split.counts(10, 1), vec![0, 10]);
        // Staging only is slower: sharing again, for good.
        one_trial(&mut split, ms(20));
        assert_eq!(split.counts(10, 1), vec![5, 5]);
        one_trial(&mut split, ms(1));
        one_trial(&mut split, ms(1));
        assert_eq!(split.counts(10, 1), vec![5, 5]);
        // Under `--backend gpu` nothing is tried: the CPU never shares.
        let mut gpu_only = Split::new(false);
        one_trial(&mut gpu_only, ms(20));
        one_trial(&mut gpu_only, ms(1));
        assert_eq!(gpu_only.counts(10, 1), vec![0, 10]);
    }

    fn reference_digest(p: &StandardParams, message: &[u8]) -> Vec<u8> {
        use reference::{kangaroo, parallel_hash};
        let (c, n, b) = (p.customization(), p.output_len(), p.block_size());
        match p.standard() {
            Standard::Kt128 => kangaroo::kt128(message, c, n),
            Standard::Kt256 => kangaroo::kt256(message, c, n),
            Standard::ParallelHash128 => parallel_hash::parallel_hash128(message, b, n, c),
            Standard::ParallelHash256 => parallel_hash::parallel_hash256(message, b, n, c),
            other => unreachable!("{other} has no chunks"),
        }
    }
}
