//! NIST SP 800-185's framing of ParallelHash128 and ParallelHash256
//! (docs/SPEC.md, "Standard functions", "Encodings"): the integer and
//! string encodings (§2.3), and the bytes of the last node, a cSHAKE (§3.3)
//! that takes the blocks' hashes between a start and an end (§6.3), and the
//! blocks' own sponge. Pure definitions; the reference crate
//! (`reference/`) states them apart, as the oracle these are tested against.

use crate::params::Algorithm;
use crate::sponge::SpongeSpec;

/// The sponge of ParallelHash's blocks (§6.3): cSHAKE with empty N and S,
/// which is `shake` itself (ParallelHash128's SHAKE128, ParallelHash256's
/// SHAKE256), to 256 or 512 bits.
pub(crate) const fn chunk_spec(shake: Algorithm) -> SpongeSpec {
    shake.sponge_spec().keeping(shake.chaining_len())
}

/// The last node's domain byte: cSHAKE's `04` (§3.3), with N = "ParallelHash".
pub(crate) const CSHAKE_DOMAIN: u8 = 0x04;
/// The function name N of ParallelHash's cSHAKE (§6.3).
const PARALLEL_HASH_NAME: &[u8] = b"ParallelHash";

/// What ParallelHash's last node absorbs before the blocks' hashes (§6.3):
/// bytepad(encode_string(N) ‖ encode_string(S), rate) ‖ left_encode(B).
pub(crate) fn parallel_hash_start(customization: &[u8], block_size: usize, rate: usize) -> Vec<u8> {
    let mut names = encode_string(PARALLEL_HASH_NAME);
    names.extend(encode_string(customization));
    let mut start = bytepad(&names, rate);
    start.extend(left_encode(block_size as u64));
    start
}

/// What the last node absorbs after the hashes of `blocks` blocks, for an
/// output of `output_len` bytes (§6.3): right_encode(n) ‖ right_encode(L).
pub(crate) fn parallel_hash_end(blocks: u64, output_len: usize) -> Vec<u8> {
    let mut end = right_encode(blocks);
    end.extend(right_encode(8 * output_len as u64));
    end
}

/// The fewest big-endian bytes that hold x, at least one (SP 800-185 §2.3.1).
fn be_bytes(x: u64) -> Vec<u8> {
    let bytes = x.to_be_bytes();
    let skip = bytes.iter().take_while(|&&b| b == 0).count().min(7);
    bytes[skip..].to_vec()
}

/// left_encode(x), SP 800-185 §2.3.1: the byte count n, then x in n bytes.
pub(crate) fn left_encode(x: u64) -> Vec<u8> {
    let digits = be_bytes(x);
    let mut out = vec![digits.len() as u8];
    out.extend(digits);
    out
}

/// right_encode(x), SP 800-185 §2.3.1: x in n bytes, then n.
pub(crate) fn right_encode(x: u64) -> Vec<u8> {
    let mut out = be_bytes(x);
    out.push(out.len() as u8);
    out
}

/// encode_string(S), SP 800-185 §2.3.2: left_encode of S's length in bits, then S.
pub(crate) fn encode_string(s: &[u8]) -> Vec<u8> {
    let mut out = left_encode(8 * s.len() as u64);
    out.extend_from_slice(s);
    out
}

/// bytepad(X, w), SP 800-185 §2.3.3: left_encode(w) ‖ X, zeros up to a
/// multiple of w.
pub(crate) fn bytepad(x: &[u8], w: usize) -> Vec<u8> {
    let mut out = left_encode(w as u64);
    out.extend_from_slice(x);
    out.resize(out.len().next_multiple_of(w), 0);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use treehash_reference::cshake;

    #[test]
    fn encodings_match_the_reference() {
        for x in super::super::ENCODED_INTEGERS {
            assert_eq!(left_encode(x), cshake::left_encode(x), "{x}");
            assert_eq!(right_encode(x), cshake::right_encode(x), "{x}");
        }
        for s in [&b""[..], b"ab", &[7; 200]] {
            assert_eq!(encode_string(s), cshake::encode_string(s));
            for w in [136, 168] {
                assert_eq!(bytepad(s, w), cshake::bytepad(s, w));
            }
        }
    }
}
