//! The integer and string encodings the standards frame their nodes with
//! (docs/SPEC.md, "Encodings"). The reference crate (`reference/`) states
//! them apart, as the oracle these are tested against.

/// length_encode(x), RFC 9861 §3.3: x in big-endian bytes with no leading
/// zero (none at all for 0), then the number of those bytes.
pub(crate) fn length_encode(x: u64) -> Vec<u8> {
    let bytes = x.to_be_bytes();
    let skip = bytes.iter().take_while(|&&b| b == 0).count();
    let mut out = bytes[skip..].to_vec();
    out.push((8 - skip) as u8);
    out
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
    use treehash_reference::{cshake, kangaroo};

    #[test]
    fn encodings_match_the_reference() {
        let values = [
            0,
            1,
            12,
            127,
            128,
            255,
            256,
            8191,
            8192,
            65538,
            1 << 40,
            u64::MAX,
        ];
        for x in values {
            assert_eq!(length_encode(x), kangaroo::length_encode(x), "{x}");
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
