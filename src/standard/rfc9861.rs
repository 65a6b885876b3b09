//! RFC 9861's framing of KT128 and KT256 over TurboSHAKE (docs/SPEC.md,
//! "Standard functions"): the chunk length, what S adds after M, and the
//! final node's bytes and domain bytes (§3.2, §3.3). The chunks' own sponge
//! is `SpongeSpec::KT128`/`KT256` (`src/sponge.rs`); TurboSHAKE (§2) is one
//! sponge with the caller's domain byte. Pure definitions; the reference
//! crate (`reference/`) states them apart, as the oracle these are tested
//! against.

/// KT's chunk length (§3.2).
pub const KT_CHUNK_LEN: usize = 8192;
/// TurboSHAKE's default domain byte D (§2.1).
pub const DEFAULT_TURBOSHAKE_DOMAIN: u8 = 0x1f;
/// D of KT's single node, where |S| ≤ 8192 (§3.2).
pub(crate) const SINGLE_NODE_DOMAIN: u8 = 0x07;
/// D of KT's final node (§3.2); the chunks' own D is in their sponge spec.
pub(crate) const FINAL_NODE_DOMAIN: u8 = 0x06;
/// What follows S_0 in KT's final node, before the chaining values (§3.2).
pub(crate) const SEPARATOR: [u8; 8] = [0x03, 0, 0, 0, 0, 0, 0, 0];
/// The final node's last bytes (§3.2).
const END: [u8; 2] = [0xff, 0xff];

/// length_encode(x), RFC 9861 §3.3: x in big-endian bytes with no leading
/// zero (none at all for 0), then the number of those bytes.
pub(crate) fn length_encode(x: u64) -> Vec<u8> {
    let bytes = x.to_be_bytes();
    let skip = bytes.iter().take_while(|&&b| b == 0).count();
    let mut out = bytes[skip..].to_vec();
    out.push((8 - skip) as u8);
    out
}

/// What S adds after M: C ‖ length_encode(|C|) (§3.2).
pub(crate) fn suffix(customization: &[u8]) -> Vec<u8> {
    let mut suffix = customization.to_vec();
    suffix.extend_from_slice(&length_encode(customization.len() as u64));
    suffix
}

/// What KT's final node absorbs after the chaining values of `chunks`
/// chunks (those after S_0): length_encode(n) ‖ FF FF (§3.2).
pub(crate) fn final_node_end(chunks: u64) -> Vec<u8> {
    let mut end = length_encode(chunks);
    end.extend_from_slice(&END);
    end
}

#[cfg(test)]
mod tests {
    use super::*;
    use treehash_reference::kangaroo;

    #[test]
    fn length_encode_matches_the_reference() {
        for x in super::super::ENCODED_INTEGERS {
            assert_eq!(length_encode(x), kangaroo::length_encode(x), "{x}");
        }
    }
}
