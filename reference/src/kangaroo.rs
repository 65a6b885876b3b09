//! KT128 and KT256 (KangarooTwelve), RFC 9861 §3: a Sakura-compatible tree of
//! TurboSHAKE calls over chunks of 8192 bytes.

use crate::turboshake::{turboshake128, turboshake256};

/// The chunk size: S is cut into chunks of 8192 bytes (RFC 9861 §3.2).
pub const CHUNK_LEN: usize = 8192;

/// D of the single node, when |S| ≤ 8192 (RFC 9861 §3.2, "SingleNode").
const SINGLE_NODE_DOMAIN: u8 = 0x07;
/// D of every chaining value CV_i (RFC 9861 §3.2, "IntermediateNode").
const INTERMEDIATE_NODE_DOMAIN: u8 = 0x0b;
/// D of the final node when |S| > 8192 (RFC 9861 §3.2, "FinalNode").
const FINAL_NODE_DOMAIN: u8 = 0x06;
/// What follows S_0 in the final node: `03 00 00 00 00 00 00 00` (RFC 9861 §3.2).
const FINAL_NODE_SEPARATOR: [u8; 8] = [0x03, 0, 0, 0, 0, 0, 0, 0];
/// The final node's last two bytes (RFC 9861 §3.2).
const FINAL_NODE_END: [u8; 2] = [0xff, 0xff];

/// length_encode(x), RFC 9861 §3.3: x in big-endian bytes with no leading
/// zero byte (none at all for x = 0), then the number of those bytes.
/// `length_encode(0)` = `00`, `length_encode(12)` = `0C 01`.
pub fn length_encode(x: u64) -> Vec<u8> {
    let mut s = Vec::new();
    let mut rest = x;
    while rest > 0 {
        s.insert(0, (rest % 256) as u8);
        rest /= 256;
    }
    s.push(s.len() as u8);
    s
}

/// One KangarooTwelve instance: its TurboSHAKE and its chaining-value length.
struct Instance {
    turboshake: fn(&[u8], u8, usize) -> Vec<u8>,
    chaining_len: usize,
}

/// KT128: TurboSHAKE128 and 32-byte chaining values (RFC 9861 §3.2).
const KT128: Instance = Instance {
    turboshake: turboshake128,
    chaining_len: 32,
};

/// KT256: TurboSHAKE256 and 64-byte chaining values (RFC 9861 §3.4).
const KT256: Instance = Instance {
    turboshake: turboshake256,
    chaining_len: 64,
};

/// The tree of RFC 9861 §3.2, step by step.
fn kangaroo_twelve(kt: &Instance, message: &[u8], customization: &[u8], out_len: usize) -> Vec<u8> {
    // S = M ‖ C ‖ length_encode(|C|)
    let mut s = message.to_vec();
    s.extend_from_slice(customization);
    s.extend_from_slice(&length_encode(customization.len() as u64));

    // |S| ≤ 8192: the single node.
    if s.len() <= CHUNK_LEN {
        return (kt.turboshake)(&s, SINGLE_NODE_DOMAIN, out_len);
    }

    // S = S_0 ‖ … ‖ S_(n−1), chunks of 8192 bytes, the last one possibly shorter.
    let chunks: Vec<&[u8]> = s.chunks(CHUNK_LEN).collect();
    let n = chunks.len();

    // FinalNode = S_0 ‖ `03 00^7` ‖ CV_1 ‖ … ‖ CV_(n−1) ‖ length_encode(n − 1) ‖ `FF FF`
    let mut final_node = chunks[0].to_vec();
    final_node.extend_from_slice(&FINAL_NODE_SEPARATOR);
    for chunk in &chunks[1..] {
        // CV_i = TurboSHAKE(S_i, `0B`, 32 or 64)
        final_node.extend_from_slice(&(kt.turboshake)(
            chunk,
            INTERMEDIATE_NODE_DOMAIN,
            kt.chaining_len,
        ));
    }
    final_node.extend_from_slice(&length_encode((n - 1) as u64));
    final_node.extend_from_slice(&FINAL_NODE_END);

    (kt.turboshake)(&final_node, FINAL_NODE_DOMAIN, out_len)
}

/// KT128(M, C, L), RFC 9861 §3.2: `out_len` (L) bytes of KangarooTwelve over
/// TurboSHAKE128 of the message M with the customization string C (empty by
/// default, §3.1).
pub fn kt128(message: &[u8], customization: &[u8], out_len: usize) -> Vec<u8> {
    kangaroo_twelve(&KT128, message, customization, out_len)
}

/// KT256(M, C, L), RFC 9861 §3.4: as [`kt128`] over TurboSHAKE256, with
/// 64-byte chaining values.
pub fn kt256(message: &[u8], customization: &[u8], out_len: usize) -> Vec<u8> {
    kangaroo_twelve(&KT256, message, customization, out_len)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The examples of RFC 9861 §3.3, and the longest lengths a u64 holds.
    #[test]
    fn length_encode_examples() {
        assert_eq!(length_encode(0), [0x00]);
        assert_eq!(length_encode(12), [0x0c, 0x01]);
        assert_eq!(length_encode(65538), [0x01, 0x00, 0x02, 0x03]);
        assert_eq!(length_encode(255), [0xff, 0x01]);
        assert_eq!(length_encode(256), [0x01, 0x00, 0x02]);
        assert_eq!(
            length_encode(u64::MAX),
            [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x08]
        );
    }

    /// RFC 9861 §5: KT128(M = `00`^0, C = `00`^0, 32).
    #[test]
    fn empty_message() {
        assert_eq!(
            hex::encode(kt128(b"", b"", 32)),
            "1ac2d450fc3b4205d19da7bfca1b37513c0803577ac7167f06fe2ce1f0ef39e5"
        );
    }
}
