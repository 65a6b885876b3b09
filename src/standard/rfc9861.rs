//! RFC 9861's framing of KT128 and KT256 over TurboSHAKE (docs/SPEC.md,
//! "Standard functions"): the chunk length, what S adds after M, the final
//! node's bytes and domain bytes (§3.2, §3.3), and the chunks' own sponge;
//! TurboSHAKE (§2) is one sponge with the caller's domain byte. Pure
//! definitions; the reference crate (`reference/`) states them apart, as
//! the oracle these are tested against.

use crate::params::Algorithm;
use crate::sponge::{Rounds, SpongeSpec};

/// KT's chunk length (§3.2): `StandardParams::KT_CHUNK_LEN` in the API.
pub(crate) const KT_CHUNK_LEN: usize = 8192;
/// TurboSHAKE's default domain byte D (§2.1):
/// `StandardParams::DEFAULT_DOMAIN` in the API.
pub(crate) const DEFAULT_TURBOSHAKE_DOMAIN: u8 = 0x1f;
/// D of KT's chunks after the first, which RFC 9861 calls leaves (§3.2).
const CHUNK_DOMAIN: u8 = 0x0b;
/// D of KT's single node, where |S| ≤ 8192 (§3.2).
pub(crate) const SINGLE_NODE_DOMAIN: u8 = 0x07;
/// D of KT's final node (§3.2).
pub(crate) const FINAL_NODE_DOMAIN: u8 = 0x06;
/// What follows S_0 in KT's final node, before the chaining values (§3.2).
pub(crate) const SEPARATOR: [u8; 8] = [0x03, 0, 0, 0, 0, 0, 0, 0];
/// The final node's last bytes (§3.2).
const END: [u8; 2] = [0xff, 0xff];

/// The sponge of KT's chunks after the first (§3.2): TurboSHAKE, 12
/// rounds, at `shake`'s rate (KT128's SHAKE128, KT256's SHAKE256) with D =
/// 0x0B, whose chaining value is 32 or 64 bytes.
pub(crate) const fn chunk_spec(shake: Algorithm) -> SpongeSpec {
    SpongeSpec::new(
        Rounds::Turbo12,
        shake.rate(),
        CHUNK_DOMAIN,
        shake.chaining_len(),
    )
}

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
