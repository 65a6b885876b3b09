//! The walk over a message for the standard functions. Pieces of M are
//! whole chunks (KT's 8192 bytes, ParallelHash's B); the chaining values of
//! a piece's chunks are computed side by side on the workers, then fed to
//! the last node in order. Nothing of a chunk outlives its piece, so memory
//! is one piece and its chaining values, whatever the message's length.
//! TurboSHAKE is one sponge over the whole message, on one thread.

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

/// The digest of `input` and its length in bytes, in pieces of about
/// `piece_target` bytes, the chunks on `workers`.
pub(crate) fn hash(
    params: &StandardParams,
    input: &mut Input<'_>,
    cpu: &CpuBackend,
    piece_target: usize,
    progress: &dyn Progress,
) -> Result<(Vec<u8>, u64), HashError> {
    let chunk_len = chunk_len(params);
    let framing = Blocks(chunk_len);
    let piece_len = message::piece_len(chunk_len, piece_target);
    let mut walk = Walk::new(params, cpu);
    let bytes = match input {
        Input::Bytes(data) => {
            message::for_each_piece_of_slice::<HashError>(
                &framing,
                data,
                piece_len,
                progress,
                |piece| walk.piece(piece),
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
                |piece| walk.piece(piece),
            )?;
            file.len()
        }
        Input::Stream(reader) => message::for_each_piece_of_stream::<HashError>(
            &framing,
            *reader,
            piece_len,
            progress,
            |bytes| walk.piece(Piece::Memory(bytes)),
        )?,
    };
    Ok((walk.finish(), bytes))
}

/// The length of the blocks a message is cut into: KT's chunks,
/// ParallelHash's B, or for TurboSHAKE its rate (any whole number of rate
/// blocks would do).
fn chunk_len(params: &StandardParams) -> usize {
    match params.standard().family() {
        Family::TurboShake => params.standard().rate(),
        Family::Kangaroo | Family::ParallelHash => params.block_size(),
    }
}

/// One message under way.
struct Walk<'a> {
    params: &'a StandardParams,
    cpu: &'a CpuBackend,
    workers: Workers<'a>,
    /// The chunks' sponge (none for TurboSHAKE).
    leaf: Option<LeafSpec>,
    node: LastNode,
    chunk_len: usize,
    /// The bytes of a last chunk that is not whole (only the message's last
    /// piece ends with one).
    tail: Vec<u8>,
    /// The chaining values of a piece's chunks, kept for the next piece.
    values: Vec<u8>,
}

impl<'a> Walk<'a> {
    fn new(params: &'a StandardParams, cpu: &'a CpuBackend) -> Self {
        Walk {
            params,
            cpu,
            workers: cpu.workers(),
            leaf: params.standard().leaf_spec(),
            node: LastNode::new(params),
            chunk_len: chunk_len(params),
            tail: Vec::new(),
            values: Vec::new(),
        }
    }

    /// The chunks' sponge.
    fn leaf(&self) -> LeafSpec {
        self.leaf.expect("only functions with chunks absorb them")
    }

    /// Absorbs the next piece of M (which starts on a chunk boundary).
    fn piece(&mut self, piece: Piece<'_>) -> Result<(), HashError> {
        let bytes = match piece {
            Piece::Memory(bytes) | Piece::Mapped { bytes, .. } => bytes,
            Piece::Unread { .. } => {
                return Err(HashError::Internal(
                    "a standard function's piece came unread".into(),
                ));
            }
        };
        debug_assert!(
            self.tail.is_empty(),
            "only the last piece is not whole chunks"
        );
        if self.params.standard().family() == Family::TurboShake {
            let node = &mut self.node;
            self.workers.run(|| node.absorb_message(bytes));
            return Ok(());
        }
        let whole = bytes.len() / self.chunk_len * self.chunk_len;
        let (mut chunks, tail) = bytes.split_at(whole);
        self.tail.extend_from_slice(tail);
        if self.node.wants_first_chunk() && !chunks.is_empty() {
            let (first, rest) = chunks.split_at(self.chunk_len);
            self.node.absorb_message(first);
            chunks = rest;
        }
        self.absorb_chunks(chunks);
        Ok(())
    }

    /// Hashes whole chunks side by side and feeds their chaining values to
    /// the last node.
    fn absorb_chunks(&mut self, chunks: &[u8]) {
        let count = chunks.len() / self.chunk_len;
        if count == 0 {
            return;
        }
        let cv_len = self.params.standard().chaining_len();
        self.values.resize(count * cv_len, 0);
        let per_task = count
            .div_ceil(self.workers.threads() * TASKS_PER_THREAD)
            .clamp(1, CHUNKS_PER_TASK);
        let (cpu, leaf, chunk_len) = (self.cpu, self.leaf(), self.chunk_len);
        self.workers.for_each_pair(
            (&mut self.values[..], per_task * cv_len),
            (chunks, per_task * chunk_len),
            1,
            |_, values, chunks| cpu.chaining_values(&leaf, chunks, chunk_len, values),
        );
        self.node.absorb_chaining_values(&self.values, count as u64);
    }

    /// The digest: the last chunks (with KT's C ‖ length_encode(|C|), which
    /// ends S) and the last node.
    fn finish(mut self) -> Vec<u8> {
        let mut tail = std::mem::take(&mut self.tail);
        if self.params.standard().family() == Family::Kangaroo {
            let c = self.params.customization();
            tail.extend_from_slice(c);
            tail.extend_from_slice(&super::encode::length_encode(c.len() as u64));
        }
        for chunk in tail.chunks(self.chunk_len) {
            if self.node.wants_first_chunk() {
                self.node.absorb_message(chunk);
            } else {
                let mut value = vec![0u8; self.params.standard().chaining_len()];
                self.cpu
                    .chaining_values(&self.leaf(), chunk, chunk.len(), &mut value);
                self.node.absorb_chaining_values(&value, 1);
            }
        }
        self.node.finish(self.params)
    }
}
