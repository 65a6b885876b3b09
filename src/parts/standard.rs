//! The parts of a standard function with a tree: KT128, KT256 (RFC 9861
//! §3) and ParallelHash128/256 (SP 800-185 §6) (docs/SPEC.md, "Parts of
//! the standard functions"). The message's n chunks (KT's 8192 bytes of
//! S = M ‖ C ‖ length_encode(|C|), ParallelHash's B bytes of X) are split
//! as an LI tree's leaves: part I of N owns chunks [⌊I·n/N⌋, ⌊(I+1)·n/N⌋),
//! one range of the file. A part stores their chaining values (KT's first
//! chunk S_0 whole, which the final node starts with); the join feeds them
//! all, in order, to the function's final node (`standard::node`).
//!
//! This module is the part's fields, their format (modes 2 and 3), the
//! join and the plan; `standard_read` hashes a part.

use std::ops::Range;

use super::format::{CHECK_LEN, MODE_KT, MODE_PARALLEL_HASH, ORIGIN_FLAGS, Reader, inconsistent};
use super::origin::Origin;
use super::plan::part_leaves;
use super::{Body, Part, PartError};
use crate::standard::node::LastNode;
use crate::standard::run::{chunk_count, chunk_len, suffix};
use crate::standard::{
    Family, KT_CHUNK_LEN, MAX_CUSTOMIZATION_LEN, Standard, StandardLabel, StandardParams,
};

/// Bytes of the header of modes 2 and 3, up to the name.
pub(super) const HEADER_LEN: usize = 118;
/// The functions of each mode, by their code in the format.
const FUNCTION_CODES: [(Standard, u8, u8); 4] = [
    (Standard::Kt128, MODE_KT, 1),
    (Standard::Kt256, MODE_KT, 2),
    (Standard::ParallelHash128, MODE_PARALLEL_HASH, 1),
    (Standard::ParallelHash256, MODE_PARALLEL_HASH, 2),
];

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
fn first_chunk_len(params: &StandardParams, file_len: u64) -> u64 {
    let s_len = file_len + suffix(params).len() as u64;
    s_len.min(KT_CHUNK_LEN as u64)
}

/// The chaining values the part owning `chunks` stores: one a chunk, but
/// for KT's first, stored whole.
fn values_stored(params: &StandardParams, chunks: &Range<u64>) -> u64 {
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

    /// The fields of mode 2 (KT) or 3 (ParallelHash), from the mode byte to
    /// the values.
    pub(super) fn write(&self, origin: &Origin, out: &mut Vec<u8>) {
        let p = &self.params;
        let (_, mode, code) = FUNCTION_CODES
            .into_iter()
            .find(|(s, _, _)| *s == p.standard())
            .expect("parts are made of the functions with a code");
        out.push(mode);
        out.push(code);
        out.push(origin.flags());
        out.extend_from_slice(&(p.block_size() as u32).to_le_bytes());
        out.extend_from_slice(&(p.output_len() as u32).to_le_bytes());
        out.extend_from_slice(&(p.customization().len() as u32).to_le_bytes());
        origin.write_numbers(out);
        out.extend_from_slice(&self.chunks.start.to_le_bytes());
        out.extend_from_slice(&self.chunks.end.to_le_bytes());
        out.extend_from_slice(&self.chunk_count.to_le_bytes());
        out.extend_from_slice(&self.value_count().to_le_bytes());
        out.extend_from_slice(&(self.first_chunk.len() as u32).to_le_bytes());
        debug_assert_eq!(out.len(), HEADER_LEN - 2);
        out.extend_from_slice(&(origin.name.len() as u16).to_le_bytes());
        out.extend_from_slice(&origin.name);
        out.extend_from_slice(p.customization());
        out.extend_from_slice(&self.first_chunk);
        out.extend_from_slice(&self.values);
    }

    /// Reads the fields of `mode` (2 or 3) after the mode byte, and checks
    /// that they agree: the parameters are in range, n is the file's chunk
    /// count, the chunks are part I of N's, and the first chunk and the
    /// values are those they call for.
    pub(super) fn read(mode: u8, mut r: Reader<'_>) -> Result<Part, PartError> {
        let body = r.bytes;
        if body.len() < HEADER_LEN {
            return Err(inconsistent(format!(
                "{} bytes, shorter than a standard function's part header",
                body.len() + CHECK_LEN
            )));
        }
        let code = r.u8();
        let standard = FUNCTION_CODES
            .iter()
            .find(|(_, m, c)| *m == mode && *c == code)
            .map(|(s, _, _)| *s)
            .ok_or_else(|| inconsistent(format!("unknown function code {code} of mode {mode}")))?;
        let flags = r.u8();
        if flags & !ORIGIN_FLAGS != 0 {
            return Err(inconsistent(format!("unknown flags {flags:#04x}")));
        }
        let block_size = r.u32() as usize;
        let output_len = r.u32() as usize;
        let customization_len = r.u32() as usize;
        if customization_len > MAX_CUSTOMIZATION_LEN {
            return Err(inconsistent(format!(
                "a customization string of {customization_len} bytes (at most \
                 {MAX_CUSTOMIZATION_LEN})"
            )));
        }
        let origin = Origin::read_numbers(&mut r, flags)?;
        let chunks = r.u64()..r.u64();
        let chunk_count = r.u64();
        let value_count = r.u64();
        let first_len = r.u32() as u64;
        let name_len = r.u16() as usize;
        debug_assert_eq!(r.at, HEADER_LEN);
        let name_end = HEADER_LEN + name_len;
        let fixed_end = name_end + customization_len;
        if body.len() < fixed_end {
            return Err(inconsistent(format!(
                "{} bytes, where its name and customization string need {}",
                body.len() + CHECK_LEN,
                fixed_end + CHECK_LEN
            )));
        }
        let customization = body[name_end..fixed_end].to_vec();
        let mut params = StandardParams::new(standard)
            .with_output_len(output_len)
            .and_then(|p| p.with_customization(customization));
        params = match standard.family() {
            Family::ParallelHash => params.and_then(|p| p.with_block_size(block_size)),
            _ if block_size == KT_CHUNK_LEN => params,
            _ => {
                return Err(inconsistent(format!(
                    "chunks of {block_size} bytes, where {standard}'s are {KT_CHUNK_LEN}"
                )));
            }
        };
        let params = params.map_err(|e| inconsistent(e.to_string()))?;
        let (own, n) = split(&params, origin.file_len, origin.count, origin.index);
        if chunk_count != n {
            return Err(inconsistent(format!(
                "{chunk_count} chunks, where a file of {} bytes has {n}",
                origin.file_len
            )));
        }
        if chunks != own {
            return Err(inconsistent(format!(
                "chunks {}..{}, where part {} of {} owns {}..{}",
                chunks.start, chunks.end, origin.index, origin.count, own.start, own.end
            )));
        }
        let first_want = if holds_first_chunk(&params, &chunks) {
            first_chunk_len(&params, origin.file_len)
        } else {
            0
        };
        if first_len != first_want {
            return Err(inconsistent(format!(
                "a first chunk of {first_len} bytes, where it holds {first_want}"
            )));
        }
        let values_want = values_stored(&params, &chunks);
        if value_count != values_want {
            return Err(inconsistent(format!(
                "{value_count} values, where its chunks need {values_want}"
            )));
        }
        // In u128: the count is the header's, and no product overflows.
        let values_len = u128::from(values_want) * params.standard().chaining_len() as u128;
        let first_end = fixed_end + first_len as usize;
        let need = first_end as u128 + values_len;
        if body.len() as u128 != need {
            return Err(inconsistent(format!(
                "{} bytes, where its fields need {}",
                body.len() + CHECK_LEN,
                need + CHECK_LEN as u128
            )));
        }
        let part = StandardPart {
            params,
            chunks,
            chunk_count,
            first_chunk: body[fixed_end..first_end].to_vec(),
            values: body[first_end..].to_vec(),
        };
        Ok(Part {
            origin: Origin {
                name: body[HEADER_LEN..name_end].to_vec(),
                ..origin
            },
            body: Body::Standard(part),
        })
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
