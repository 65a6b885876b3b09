//! The parts of a standard function with a tree: KT128, KT256 (RFC 9861
//! §3) and ParallelHash128/256 (SP 800-185 §6) (docs/SPEC.md, "Parts of
//! the standard functions"). The message's n chunks (KT's 8192 bytes of
//! S = M ‖ C ‖ length_encode(|C|), ParallelHash's B bytes of X) are split
//! as an LI tree's leaves: part I of N owns chunks [⌊I·n/N⌋, ⌊(I+1)·n/N⌋),
//! one range of the file. A part stores their chaining values (KT's first
//! chunk S_0 whole, which the final node starts with); the join feeds them
//! all, in order, to the function's final node (`standard::node`).
//!
//! This module is the part's fields, the join and the plan; `format`
//! writes and reads them (modes 2 and 3), `standard_read` hashes a part.

use std::ops::Range;

use super::plan::part_leaves;

use crate::label::StandardLabel;
use crate::standard::node::LastNode;
use crate::standard::{Family, KT_CHUNK_LEN, StandardParams};
use crate::standard::{chunk_count, chunk_len, suffix};

/// A standard part's own fields.
#[derive(Clone, PartialEq, Eq)]
pub(super) struct StandardPart {
    pub(super) params: StandardParams,
    /// The chunks it owns, of `chunk_count`.
    pub(super) chunks: Range<u64>,
    /// n, the message's chunks.
    pub(super) chunk_count: u64,
    /// KT's first chunk S_0, where the part owns it (else empty).
    pub(super) first_chunk: Vec<u8>,
    /// The chaining values of its other chunks, in order.
    pub(super) values: Vec<u8>,
}

/// Part `index` of `count` of a file of `file_len` bytes under `params`:
/// the chunks it owns, and n, the chunks of the whole message.
pub(super) fn split(
    params: &StandardParams,
    file_len: u64,
    count: u64,
    index: u64,
) -> (Range<u64>, u64) {
    let chunk_count = chunk_count(params, file_len);
    (part_leaves(chunk_count, count, index), chunk_count)
}

/// Whether the part owning `chunks` stores KT's first chunk whole.
pub(super) fn holds_first_chunk(params: &StandardParams, chunks: &Range<u64>) -> bool {
    params.standard().family() == Family::Kangaroo && chunks.start == 0 && !chunks.is_empty()
}

/// The bytes of the message's first chunk (KT's S_0) for a file of
/// `file_len` bytes: S's first 8192 bytes, all of S where it is shorter.
pub(super) fn first_chunk_len(params: &StandardParams, file_len: u64) -> u64 {
    let s_len = file_len + suffix(params).len() as u64;
    s_len.min(KT_CHUNK_LEN as u64)
}

/// The chaining values the part owning `chunks` stores: one a chunk, but
/// for KT's first, stored whole.
pub(super) fn values_stored(params: &StandardParams, chunks: &Range<u64>) -> u64 {
    let own = chunks.end - chunks.start;
    own - u64::from(holds_first_chunk(params, chunks))
}

/// The bytes of a file of `file_len` bytes that the part owning `chunks`
/// reads: its chunks' bytes that lie in the file (the suffix of KT's S,
/// C ‖ length_encode(|C|), is not the file's).
pub(super) fn bytes_read(params: &StandardParams, chunks: &Range<u64>, file_len: u64) -> u64 {
    let chunk_len = chunk_len(params) as u64;
    let at = |chunk: u64| chunk.saturating_mul(chunk_len).min(file_len);
    at(chunks.end) - at(chunks.start)
}

impl StandardPart {
    /// The chaining values it stores.
    pub(super) fn value_count(&self) -> u64 {
        values_stored(&self.params, &self.chunks)
    }

    /// What makes `self` another function's or another parameters' than
    /// `first`: the field's name and both values.
    pub(super) fn difference(
        &self,
        first: &StandardPart,
    ) -> Option<(&'static str, String, String)> {
        let both =
            |what, show: &dyn Fn(&StandardPart) -> String| Some((what, show(self), show(first)));
        let (p, f) = (&self.params, &first.params);
        if p.standard() != f.standard() {
            return both("function", &|s| s.params.standard().to_string());
        }
        if p.customization() != f.customization() {
            return both("customization string", &|s| {
                let c = s.params.customization();
                match c.len() {
                    0 => "none".into(),
                    1..=16 => hex::encode(c),
                    len => format!("{}… ({len} bytes)", hex::encode(&c[..16])),
                }
            });
        }
        if p != f {
            return both("parameters", &|s| {
                // The customization strings are the same: left out.
                let label = StandardLabel {
                    customization: Vec::new(),
                    ..StandardLabel::of(&s.params)
                };
                format!("{label}, {}-byte digest", s.params.output_len())
            });
        }
        None
    }
}

/// The digest of a whole set of standard parts in the split's order (their
/// parameters the same): KT's first chunk and every chaining value, in
/// order, into the function's final node.
pub(super) fn digest(parts: &[&StandardPart]) -> Vec<u8> {
    let params = &parts[0].params;
    let mut node = LastNode::new(params);
    for part in parts {
        if !part.first_chunk.is_empty() {
            node.absorb_message(&part.first_chunk);
        }
        node.absorb_chaining_values(&part.values, part.value_count());
    }
    node.finish(params)
}

/// What one part of a standard function's split owns and reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StandardPlan {
    /// I, its index in the split.
    pub index: u64,
    /// The chunks it owns.
    pub chunks: Range<u64>,
    /// The bytes of the file it reads: its chunks', one range.
    pub read_len: u64,
    /// The chaining values it stores (KT's first chunk is stored whole).
    pub values: u64,
}

/// The plan of a file of `file_len` bytes split into `count` parts under
/// `params` (a function with chunks: KT or ParallelHash), part by part.
pub fn standard_plan(
    params: &StandardParams,
    count: u64,
    file_len: u64,
) -> impl Iterator<Item = StandardPlan> + '_ {
    (0..count).map(move |index| {
        let (chunks, _) = split(params, file_len, count, index);
        StandardPlan {
            index,
            read_len: bytes_read(params, &chunks, file_len),
            values: values_stored(params, &chunks),
            chunks,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::standard::Standard;

    #[test]
    fn chunks_and_bytes_of_a_split() {
        let kt = StandardParams::new(Standard::Kt128);
        // 20,000 bytes and C = "" ‖ length_encode(0): |S| = 20,001, 3 chunks.
        assert_eq!(chunk_count(&kt, 20_000), 3);
        let plans: Vec<_> = standard_plan(&kt, 2, 20_000).collect();
        assert_eq!(plans[0].chunks, 0..1);
        assert_eq!((plans[0].read_len, plans[0].values), (8192, 0));
        assert_eq!(plans[1].chunks, 1..3);
        assert_eq!((plans[1].read_len, plans[1].values), (20_000 - 8192, 2));
        // An empty file is S = 00: one chunk, held whole by the part that
        // owns it (the last, with more parts than chunks).
        let plans: Vec<_> = standard_plan(&kt, 3, 0).collect();
        assert_eq!(plans[2].chunks, 0..1);
        assert_eq!(first_chunk_len(&kt, 0), 1);
        assert!(plans.iter().all(|p| p.read_len == 0 && p.values == 0));
        // C of 9000 bytes: the file's 100 bytes and C fill two chunks.
        let kt_c = kt.with_customization(vec![1; 9000]).unwrap();
        assert_eq!(chunk_count(&kt_c, 100), 2);
        let ph = StandardParams::new(Standard::ParallelHash256)
            .with_block_size(7)
            .unwrap();
        assert_eq!(chunk_count(&ph, 0), 0);
        assert_eq!(chunk_count(&ph, 15), 3);
        let plans: Vec<_> = standard_plan(&ph, 2, 15).collect();
        assert_eq!((plans[0].chunks.clone(), plans[0].read_len), (0..1, 7));
        assert_eq!((plans[1].chunks.clone(), plans[1].read_len), (1..3, 8));
        assert_eq!(plans[1].values, 2);
    }
}
