//! TurboSHAKE128 and TurboSHAKE256, RFC 9861 §2: the SHAKE sponges on
//! Keccak-p[1600, 12] with a domain-separation byte D.

use crate::Node;
use crate::keccak::sponge;

/// n_r of TurboSHAKE's permutation, Keccak-p[1600, n_r = 12] (RFC 9861 §2.2).
pub const TURBOSHAKE_ROUNDS: usize = 12;

/// D when none is given (RFC 9861 §2.1).
pub const DEFAULT_DOMAIN: u8 = 0x1f;

/// The rate of TurboSHAKE128: SHAKE128's, 168 bytes (RFC 9861 §2.2).
pub const TURBOSHAKE128_RATE: usize = Node::Shake128.rate();

/// The rate of TurboSHAKE256: SHAKE256's, 136 bytes (RFC 9861 §2.2).
pub const TURBOSHAKE256_RATE: usize = Node::Shake256.rate();

/// TurboSHAKE128(M, D, L), RFC 9861 §2.2: `out_len` (L) bytes of the sponge of
/// rate 168 over Keccak-p[1600, 12], with M' = M ‖ D padded as in the RFC.
///
/// # Panics
/// If `domain` (D) is outside `01` .. `7F` (RFC 9861 §2.1).
pub fn turboshake128(message: &[u8], domain: u8, out_len: usize) -> Vec<u8> {
    sponge(
        TURBOSHAKE128_RATE,
        TURBOSHAKE_ROUNDS,
        domain,
        message,
        out_len,
    )
}

/// TurboSHAKE256(M, D, L), RFC 9861 §2.2: as [`turboshake128`] with a rate of
/// 136 bytes.
///
/// # Panics
/// If `domain` (D) is outside `01` .. `7F` (RFC 9861 §2.1).
pub fn turboshake256(message: &[u8], domain: u8, out_len: usize) -> Vec<u8> {
    sponge(
        TURBOSHAKE256_RATE,
        TURBOSHAKE_ROUNDS,
        domain,
        message,
        out_len,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 9861 §5: TurboSHAKE128(M = `00`^0, D = `1F`, 32) and the XOF
    /// property of §2.1 (a shorter output is a prefix of a longer one).
    #[test]
    fn empty_message_and_prefix_property() {
        let long = turboshake128(b"", DEFAULT_DOMAIN, 64);
        assert_eq!(
            hex::encode(&long[..32]),
            "1e415f1c5983aff2169217277d17bb538cd945a397ddec541f1ce41af2c1b74c"
        );
        assert_eq!(turboshake128(b"", DEFAULT_DOMAIN, 32), long[..32]);
        assert_eq!(turboshake128(b"", DEFAULT_DOMAIN, 0), b"");
    }

    #[test]
    #[should_panic(expected = "outside 01..7F")]
    fn domain_zero_is_refused() {
        turboshake256(b"", 0x00, 64);
    }
}
