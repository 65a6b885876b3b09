//! The state between pieces ([`Walk`]): the last node, or a part's sink
//! ([`PartSink`]), and an unfinished last chunk; `crate::stream` keeps one
//! between the calls of `update`.

use super::*;

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
    pub(super) wants_first_chunk: bool,
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
/// hash the next ones. It borrows nothing, so that a `Stream` keeps it
/// between updates; a clone (the last node's sponge, the tail and those
/// values) finishes a digest while the original goes on.
pub(crate) struct Walk<S = LastNode> {
    pub(super) node: S,
    /// The bytes of a last chunk that is not whole (only the message's last
    /// piece ends with one).
    pub(super) tail: Vec<u8>,
    /// Chaining values not fed to the last node yet, in order.
    pub(super) pending: Vec<u8>,
    /// Space for the next wave's chaining values.
    pub(super) spare: Vec<u8>,
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
    pub(super) fn with_sink(node: S) -> Self {
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
    pub(super) fn piece_from_file(
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

    /// Hashes `count` whole chunks side by side, in waves whose chaining
    /// values fit [`MAX_VALUES_LEN`]: `hash(range, values)` writes the
    /// values of the chunks `range` (counted from the first of them) on the
    /// workers, while one of them feeds the wave before to the last node.
    pub(super) fn absorb_chunks<E: Send>(
        &mut self,
        cx: &Context<'_>,
        count: usize,
        hash: impl Fn(Range<usize>, &mut [u8]) -> Result<(), E> + Sync,
    ) -> Result<(), E> {
        let cv_len = cx.params.standard().chaining_len();
        let mut from = 0;
        while from < count {
            let to = count.min(from + cx.chunks_per_wave());
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
    pub(super) fn flush(&mut self, cv_len: usize) {
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
    pub(super) fn absorb_last_chunks(&mut self, cx: &Context<'_>, tail: &[u8]) {
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
