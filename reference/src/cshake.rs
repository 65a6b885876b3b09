//! cSHAKE128 and cSHAKE256 with the encodings they are built from, NIST SP
//! 800-185 §2.3 and §3. Strings are whole bytes here; lengths given to the
//! encodings are in bits, as the standard states them.

use crate::Node;
use crate::keccak::{KECCAK_F_ROUNDS, sponge};

/// The byte that follows cSHAKE's input: the two bits `00` of
/// KECCAK\[c\](… ‖ X ‖ 00, L), then pad10*1's first bit (SP 800-185 §3.3).
const CSHAKE_DOMAIN: u8 = 0x04;

/// The byte that follows SHAKE's input (SHAKE128 and SHAKE256 share it):
/// cSHAKE with N = S = "" is SHAKE.
const SHAKE_DOMAIN: u8 = Node::Shake128.domain_byte();

/// The rate of cSHAKE128 (KECCAK\[256\]): SHAKE128's, 168 bytes.
pub const CSHAKE128_RATE: usize = Node::Shake128.rate();

/// The rate of cSHAKE256 (KECCAK\[512\]): SHAKE256's, 136 bytes.
pub const CSHAKE256_RATE: usize = Node::Shake256.rate();

/// The big-endian bytes x_1 … x_n of x, where n is the smallest *positive*
/// integer with 2^(8n) > x (so 0 takes one byte, unlike RFC 9861's length_encode).
fn base_256(x: u64) -> Vec<u8> {
    let bytes = x.to_be_bytes();
    let first = bytes
        .iter()
        .position(|&b| b != 0)
        .unwrap_or(bytes.len() - 1);
    bytes[first..].to_vec()
}

/// left_encode(x), SP 800-185 §2.3.1: n, then x in n big-endian bytes.
/// `left_encode(0)` = `01 00`. (The standard allows x < 2^2040; a u64 covers
/// every length here.)
pub fn left_encode(x: u64) -> Vec<u8> {
    let digits = base_256(x);
    let mut out = vec![digits.len() as u8];
    out.extend_from_slice(&digits);
    out
}

/// right_encode(x), SP 800-185 §2.3.1: x in n big-endian bytes, then n.
/// `right_encode(0)` = `00 01`.
pub fn right_encode(x: u64) -> Vec<u8> {
    let mut out = base_256(x);
    out.push(out.len() as u8);
    out
}

/// encode_string(S), SP 800-185 §2.3.2: left_encode(len(S)) ‖ S, with len(S)
/// in bits.
pub fn encode_string(s: &[u8]) -> Vec<u8> {
    let mut out = left_encode(8 * s.len() as u64);
    out.extend_from_slice(s);
    out
}

/// bytepad(X, w), SP 800-185 §2.3.3: left_encode(w) ‖ X, then `00` bytes until
/// the length is a multiple of w bytes (none if it already is).
///
/// # Panics
/// If w is 0 (the standard requires w > 0).
pub fn bytepad(x: &[u8], w: usize) -> Vec<u8> {
    assert!(w > 0, "bytepad needs w > 0");
    let mut z = left_encode(w as u64);
    z.extend_from_slice(x);
    while !z.len().is_multiple_of(w) {
        z.push(0);
    }
    z
}

/// cSHAKE with the given rate, SP 800-185 §3.3.
fn cshake(rate: usize, x: &[u8], out_len: usize, n: &[u8], s: &[u8]) -> Vec<u8> {
    // 1. If N = "" and S = "": return SHAKE(X, L).
    if n.is_empty() && s.is_empty() {
        return sponge(rate, KECCAK_F_ROUNDS, SHAKE_DOMAIN, x, out_len);
    }
    // 2. Else: KECCAK[c](bytepad(encode_string(N) ‖ encode_string(S), rate) ‖ X ‖ 00, L).
    let mut prefix = encode_string(n);
    prefix.extend_from_slice(&encode_string(s));
    let mut input = bytepad(&prefix, rate);
    input.extend_from_slice(x);
    sponge(rate, KECCAK_F_ROUNDS, CSHAKE_DOMAIN, &input, out_len)
}

/// cSHAKE128(X, L, N, S), SP 800-185 §3.3: `out_len` bytes (L = 8·out_len
/// bits) of the customizable SHAKE128 of X with function name N and
/// customization string S.
pub fn cshake128(x: &[u8], out_len: usize, n: &[u8], s: &[u8]) -> Vec<u8> {
    cshake(CSHAKE128_RATE, x, out_len, n, s)
}

/// cSHAKE256(X, L, N, S), SP 800-185 §3.3: as [`cshake128`] on KECCAK\[512\].
pub fn cshake256(x: &[u8], out_len: usize, n: &[u8], s: &[u8]) -> Vec<u8> {
    cshake(CSHAKE256_RATE, x, out_len, n, s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodings_follow_the_standard() {
        assert_eq!(left_encode(0), [0x01, 0x00]);
        assert_eq!(left_encode(255), [0x01, 0xff]);
        assert_eq!(left_encode(256), [0x02, 0x01, 0x00]);
        assert_eq!(left_encode(168), [0x01, 0xa8]);
        assert_eq!(right_encode(0), [0x00, 0x01]);
        assert_eq!(right_encode(256), [0x01, 0x00, 0x02]);
        assert_eq!(right_encode(u64::MAX)[8], 8);
        assert_eq!(encode_string(b""), [0x01, 0x00]);
        assert_eq!(encode_string(b"ab"), [0x01, 0x10, b'a', b'b']);
        // bytepad adds nothing when left_encode(w) ‖ X fills whole blocks.
        assert_eq!(bytepad(&[7; 6], 8), [0x01, 0x08, 7, 7, 7, 7, 7, 7]);
        assert_eq!(bytepad(&[7; 7], 8).len(), 16);
        assert_eq!(bytepad(b"", 168).len(), 168);
    }

    /// With N and S empty, cSHAKE is SHAKE (SP 800-185 §3.3 step 1): here
    /// RustCrypto's, through [`crate::node_function`].
    #[test]
    fn empty_name_and_customization_is_shake() {
        assert_eq!(
            cshake128(b"abc", 40, b"", b""),
            crate::node_function(Node::Shake128, b"abc", 40)
        );
        assert_eq!(
            cshake256(b"abc", 40, b"", b""),
            crate::node_function(Node::Shake256, b"abc", 40)
        );
    }
}
