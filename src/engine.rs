//! What every backend offers the input path, for both kinds of work:
//!
//! - [`LeafEngine`]: some of the leaves of one LI message (all of them, or a
//!   contiguous range when several engines share the message), which absorb
//!   its pieces in order, can hand their states to another engine at a
//!   piece boundary, and at the end give their outputs or the digest;
//! - [`ChunkEngine`]: whole chunks of a standard function's message, hashed
//!   behind the caller's back, their chaining values given back in order
//!   (a GPU; the CPU's workers hash chunks inside the chunk scheduler,
//!   `schedule::chunks`).

use std::ops::Range;

use std::time::Duration;

use crate::error::HashError;
use crate::input::InputFile;
use crate::message::{Access, Piece};
use crate::progress::EngineId;
use crate::timings::Timings;

/// The states of consecutive leaves at a block boundary of M, one per leaf,
/// as engines hand leaves to each other. Each is the leaf's Keccak state with
/// the bytes of an unfinished rate block already XORed in: where the leaf
/// stands in its rate follows from the bytes it has absorbed, which follow
/// from M's length so far. Leaves past the end of the list are fresh (they
/// hold no block yet), so a list is never longer than the leaves that hold one.
pub(crate) type LeafStates = Vec<[u64; 25]>;

/// Some leaves of one message on one backend.
pub(crate) trait LeafEngine: Send {
    /// The piece length this backend wants (a multiple of B), and how it
    /// wants a file's bytes.
    fn piece_len(&self) -> usize;
    fn access(&self) -> Access;

    /// The leaves this engine owns: it absorbs only their blocks.
    fn leaves(&self) -> Range<u64>;

    /// Absorbs its blocks of the next piece of M (which starts on a block
    /// boundary). An engine that owns no leaf only moves its position on.
    fn absorb(&mut self, piece: Piece<'_>) -> Result<(), HashError>;

    /// Gives up `leaves`, the first or the last of its own (it may be all of
    /// them), once every piece so far is absorbed: their states.
    fn take_leaves(&mut self, leaves: Range<u64>) -> Result<LeafStates, HashError>;

    /// Takes over `leaves`, just before or just after its own (any range when
    /// it owns none), whose states are `states`.
    fn give_leaves(&mut self, leaves: Range<u64>, states: LeafStates) -> Result<(), HashError>;

    /// A second engine whose leaves hold what this one's hold, which goes
    /// on apart from it: a `Stream`'s digest midway finishes such a copy. An
    /// error for an engine whose states it cannot copy in place (a GPU's);
    /// its leaves can still be taken out and given to two engines.
    fn fork(&self) -> Result<Box<dyn LeafEngine + '_>, HashError> {
        Err(HashError::Internal(
            "this engine cannot be copied in place".to_string(),
        ))
    }

    /// Pads its leaves: the outputs of those that hold a block, in leaf
    /// order, `params.leaf_output_len()` bytes each.
    fn finish_leaves(self: Box<Self>, times: &mut Timings) -> Result<Vec<u8>, HashError>;

    /// Pads every leaf and reduces the tree: the digest. Only for an engine
    /// that owns every leaf.
    fn finish(self: Box<Self>, times: &mut Timings) -> Result<Vec<u8>, HashError>;
}

/// The boundaries b₀ = 0 ≤ b₁ ≤ … ≤ bₙ = L (engine i owns [bᵢ, bᵢ₊₁))
/// that give the first of `n` engines `first_share` of the `leaf_count`
/// leaves and the others equal parts of the rest. Engines begun side by side
/// start from `split_leaves(1/n, n, L)`, the split the schedule's balance
/// asks for at the first piece, so that nothing moves there.
pub(crate) fn split_leaves(first_share: f64, n: usize, leaf_count: u64) -> Vec<u64> {
    let first = ((first_share * leaf_count as f64).round() as u64).min(leaf_count);
    let rest = leaf_count - first;
    let mut bounds = vec![0, first];
    for k in 1..n {
        bounds.push(first + rest * k as u64 / (n as u64 - 1));
    }
    bounds
}

/// The leaves an engine that owns `own` keeps when it gives up `taken`,
/// which must be an end of `own` (or all of it); `None` otherwise.
pub(crate) fn kept_after_taking(own: &Range<u64>, taken: &Range<u64>) -> Option<Range<u64>> {
    if taken.start > taken.end || taken.start < own.start || taken.end > own.end {
        None
    } else if taken.start == own.start {
        Some(taken.end..own.end)
    } else if taken.end == own.end {
        Some(own.start..taken.start)
    } else {
        None
    }
}

/// The leaves an engine that owns `own` owns once given `given`, which must
/// border `own` (any range when it owns none); `None` otherwise.
pub(crate) fn owned_after_giving(own: &Range<u64>, given: &Range<u64>) -> Option<Range<u64>> {
    if given.start > given.end {
        None
    } else if own.is_empty() {
        Some(given.clone())
    } else if given.end == own.start {
        Some(given.start..own.end)
    } else if given.start == own.end {
        Some(own.start..given.end)
    } else {
        None
    }
}

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

/// An engine that hashes whole chunks behind the caller's back (a GPU):
/// what it is handed is hashed while the caller goes on, and the chaining
/// values come back in the order the chunks were handed over.
pub(crate) trait ChunkEngine: Send {
    /// Which engine it is, in the shares.
    fn id(&self) -> EngineId;

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
