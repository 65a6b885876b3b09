//! The walk over a message for the standard functions. Pieces of M are
//! whole chunks (KT's 8192 bytes, ParallelHash's B); the chaining values of
//! a piece's chunks are computed side by side on the workers, then fed to
//! the last node in order. Nothing of a chunk outlives its piece, so memory
//! is one piece and its chaining values, whatever the message's length.
//! TurboSHAKE is one sponge over the whole message, on one thread.
//!
//! [`Walk`] is the state between pieces; [`hash`] drives it over an input,
//! and `crate::stream` over the parts of an input given by `update`.

use std::sync::atomic::AtomicBool;

use super::node::LastNode;
use super::{Family, StandardParams};
use crate::cpu::CpuBackend;
use crate::cpu::chunks::LeafSpec;
use crate::cpu::workers::Workers;
use crate::error::HashError;
use crate::message::Input;
use crate::message::{self, Access, Blocks, Piece};
use crate::progress::Progress;

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

/// The digest of `input` and its length in bytes, in pieces of about
/// `piece_target` bytes, the chunks on `cpu`'s workers.
pub(crate) fn hash(
    params: &StandardParams,
    input: &mut Input<'_>,
    cpu: &CpuBackend,
    piece_target: usize,
    progress: &dyn Progress,
) -> Result<(Vec<u8>, u64), HashError> {
    let framing = Blocks(chunk_len(params));
    let piece_len = piece_len(params, piece_target);
    let cx = Context::new(params, cpu);
    let mut walk = Walk::new(params);
    let mut absorb = |piece: Piece<'_>| -> Result<(), HashError> {
        walk.piece(&cx, piece_bytes(piece)?);
        Ok(())
    };
    let bytes = match input {
        Input::Bytes(data) => {
            message::for_each_piece_of_slice::<HashError>(
                &framing, data, piece_len, progress, absorb,
            )?;
            data.len() as u64
        }
        Input::File(file) => {
            let unmapped = AtomicBool::new(false);
            message::for_each_piece_of_file(
                &framing,
                file,
                piece_len,
                Access::Map,
                &unmapped,
                progress,
                absorb,
            )?;
            file.len()
        }
        Input::Stream(reader) => message::for_each_piece_of_stream::<HashError>(
            &framing,
            *reader,
            piece_len,
            progress,
            |bytes| absorb(Piece::Memory(bytes)),
        )?,
    };
    Ok((walk.finish(&cx), bytes))
}

/// The bytes of a piece: a standard function's pieces are all read.
fn piece_bytes(piece: Piece<'_>) -> Result<&[u8], HashError> {
    match piece {
        Piece::Memory(bytes) | Piece::Mapped { bytes, .. } => Ok(bytes),
        Piece::Unread { .. } => Err(HashError::Internal(
            "a standard function's piece came unread".into(),
        )),
    }
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
}

/// One message under way, from piece to piece: its last node, and the bytes
/// of an unfinished last chunk. It borrows nothing, so that a stream keeps
/// it between updates; a clone (the last node's sponge and the tail, a few
/// hundred bytes) finishes a digest while the original goes on.
pub(crate) struct Walk {
    node: LastNode,
    /// The bytes of a last chunk that is not whole (only the message's last
    /// piece ends with one).
    tail: Vec<u8>,
    /// The chaining values of a piece's chunks, kept for the next piece.
    values: Vec<u8>,
}

impl Clone for Walk {
    /// The state, not the space kept for chaining values.
    fn clone(&self) -> Self {
        Walk {
            node: self.node.clone(),
            tail: self.tail.clone(),
            values: Vec::new(),
        }
    }
}

impl Walk {
    pub(crate) fn new(params: &StandardParams) -> Self {
        Walk {
            node: LastNode::new(params),
            tail: Vec::new(),
            values: Vec::new(),
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
        self.absorb_chunks(cx, chunks);
    }

    /// Hashes whole chunks side by side and feeds their chaining values to
    /// the last node, in batches of at most [`MAX_VALUES_LEN`] of values.
    fn absorb_chunks(&mut self, cx: &Context<'_>, chunks: &[u8]) {
        let cv_len = cx.params.standard().chaining_len();
        let batch = (MAX_VALUES_LEN / cv_len) * cx.chunk_len;
        for batch in chunks.chunks(batch) {
            self.absorb_batch(cx, batch);
        }
    }

    /// Hashes whole chunks side by side and feeds their chaining values to
    /// the last node.
    fn absorb_batch(&mut self, cx: &Context<'_>, chunks: &[u8]) {
        let count = chunks.len() / cx.chunk_len;
        if count == 0 {
            return;
        }
        let cv_len = cx.params.standard().chaining_len();
        self.values.resize(count * cv_len, 0);
        let per_task = count
            .div_ceil(cx.workers.threads() * TASKS_PER_THREAD)
            .clamp(1, CHUNKS_PER_TASK);
        let (cpu, leaf, chunk_len) = (cx.cpu, cx.leaf(), cx.chunk_len);
        cx.workers.for_each_pair(
            (&mut self.values[..], per_task * cv_len),
            (chunks, per_task * chunk_len),
            1,
            |_, values, chunks| cpu.chaining_values(&leaf, chunks, chunk_len, values),
        );
        self.node.absorb_chaining_values(&self.values, count as u64);
    }

    /// The digest: the last chunks (with KT's C ‖ length_encode(|C|), which
    /// ends S) and the last node.
    pub(crate) fn finish(mut self, cx: &Context<'_>) -> Vec<u8> {
        let params = cx.params;
        let mut tail = std::mem::take(&mut self.tail);
        if params.standard().family() == Family::Kangaroo {
            let c = params.customization();
            tail.extend_from_slice(c);
            tail.extend_from_slice(&super::encode::length_encode(c.len() as u64));
        }
        for chunk in tail.chunks(cx.chunk_len) {
            if self.node.wants_first_chunk() {
                self.node.absorb_message(chunk);
            } else {
                let mut value = vec![0u8; params.standard().chaining_len()];
                cx.cpu
                    .chaining_values(&cx.leaf(), chunk, chunk.len(), &mut value);
                self.node.absorb_chaining_values(&value, 1);
            }
        }
        self.node.finish(params)
    }
}
