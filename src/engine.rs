//! What every backend offers the input path: the leaves of one message,
//! which absorb its pieces in order and then give the digest.

use crate::error::HashError;
use crate::message::{Access, Piece};
use crate::timings::Timings;

/// One message's leaves on one backend.
pub(crate) trait LeafEngine {
    /// The piece length this backend wants (a multiple of B), and how it
    /// wants a file's bytes.
    fn piece_len(&self) -> usize;
    fn access(&self) -> Access;

    /// Absorbs the next piece of M (it starts on a block boundary).
    fn absorb(&mut self, piece: Piece<'_>) -> Result<(), HashError>;

    /// Pads every leaf and reduces the tree: the digest.
    fn finish(self: Box<Self>, times: &mut Timings) -> Result<Vec<u8>, HashError>;
}
