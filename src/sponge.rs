//! One interface over the six FIPS 202 functions of RustCrypto (`sha3` for
//! SHA3-*, `shake` for SHAKE*), so that tree code is written once and
//! monomorphised per function by the crate-internal `with_sponge!` macro.

use sha3::Digest;
use shake::{ExtendableOutput, XofReader};

use crate::params::Algorithm;

/// An incremental hash whose state is small enough to keep one per leaf
/// (RustCrypto keeps the 200-byte Keccak state and a cursor, nothing more).
pub trait Sponge: Clone + Default + Send + Sync {
    const ALGORITHM: Algorithm;

    /// Absorbs the next bytes.
    fn absorb(&mut self, data: &[u8]);

    /// Pads and writes `out.len()` bytes of output. For SHA3-* the length
    /// must be the digest size (parameters are validated before this is reached).
    fn squeeze_into(self, out: &mut [u8]);

    /// The hash of `data`, `out.len()` bytes long.
    fn hash_into(data: &[u8], out: &mut [u8]) {
        let mut sponge = Self::default();
        sponge.absorb(data);
        sponge.squeeze_into(out);
    }
}

macro_rules! fixed_sponge {
    ($ty:ty, $alg:expr) => {
        impl Sponge for $ty {
            const ALGORITHM: Algorithm = $alg;
            #[inline]
            fn absorb(&mut self, data: &[u8]) {
                Digest::update(self, data);
            }
            fn squeeze_into(self, out: &mut [u8]) {
                out.copy_from_slice(&self.finalize());
            }
        }
    };
}

macro_rules! xof_sponge {
    ($ty:ty, $alg:expr) => {
        impl Sponge for $ty {
            const ALGORITHM: Algorithm = $alg;
            #[inline]
            fn absorb(&mut self, data: &[u8]) {
                shake::Update::update(self, data);
            }
            fn squeeze_into(self, out: &mut [u8]) {
                self.finalize_xof().read(out);
            }
        }
    };
}

fixed_sponge!(sha3::Sha3_224, Algorithm::Sha3_224);
fixed_sponge!(sha3::Sha3_256, Algorithm::Sha3_256);
fixed_sponge!(sha3::Sha3_384, Algorithm::Sha3_384);
fixed_sponge!(sha3::Sha3_512, Algorithm::Sha3_512);
xof_sponge!(shake::Shake128, Algorithm::Shake128);
xof_sponge!(shake::Shake256, Algorithm::Shake256);

/// Runs `$body` with the type alias `$S` bound to the [`Sponge`] of `$alg`.
macro_rules! with_sponge {
    ($alg:expr, $S:ident => $body:expr) => {
        match $alg {
            $crate::params::Algorithm::Sha3_224 => {
                type $S = ::sha3::Sha3_224;
                $body
            }
            $crate::params::Algorithm::Sha3_256 => {
                type $S = ::sha3::Sha3_256;
                $body
            }
            $crate::params::Algorithm::Sha3_384 => {
                type $S = ::sha3::Sha3_384;
                $body
            }
            $crate::params::Algorithm::Sha3_512 => {
                type $S = ::sha3::Sha3_512;
                $body
            }
            $crate::params::Algorithm::Shake128 => {
                type $S = ::shake::Shake128;
                $body
            }
            $crate::params::Algorithm::Shake256 => {
                type $S = ::shake::Shake256;
                $body
            }
        }
    };
}

pub(crate) use with_sponge;

/// Pads a Keccak state whose next free byte of the rate is `pos` (< rate):
/// the domain byte there, pad10*1's last bit at the rate's last byte. The
/// permutation that follows gives the first output block.
pub(crate) fn pad(state: &mut [u64; 25], pos: usize, algorithm: Algorithm) {
    for (word, bits) in padding(pos, algorithm) {
        state[word] ^= bits;
    }
}

/// The padding of a state whose next free byte of the rate is `pos`, as
/// [`pad`] XORs it in: the two (word, bits) pairs, for states held other
/// than as 25 words (lane-major groups of several).
pub(crate) fn padding(pos: usize, algorithm: Algorithm) -> [(usize, u64); 2] {
    let rate = algorithm.rate();
    [
        (
            pos / 8,
            u64::from(algorithm.domain_byte()) << (8 * (pos % 8)),
        ),
        (rate / 8 - 1, 1 << 63),
    ]
}

/// The plain FIPS 202 function: `out.len()` bytes of A(data).
pub fn plain_hash(algorithm: Algorithm, data: &[u8], out_len: usize) -> Vec<u8> {
    let mut out = vec![0; out_len];
    with_sponge!(algorithm, S => S::hash_into(data, &mut out));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_answers_for_abc() {
        let hex = |a, n| hex::encode(plain_hash(a, b"abc", n));
        assert_eq!(
            hex(Algorithm::Sha3_256, 32),
            "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532"
        );
        assert_eq!(hex(Algorithm::Shake128, 10), "5881092dd818bf5cf8a3");
    }

    /// `pad` then one permutation is RustCrypto's answer, for every function
    /// and every padding position.
    #[test]
    fn padding_matches_rustcrypto() {
        for algorithm in Algorithm::ALL {
            let rate = algorithm.rate();
            // Under Miri, where a permutation takes a good part of a
            // second, the first and last padding positions only.
            let lens = if cfg!(miri) {
                vec![0, rate - 1]
            } else {
                vec![0, 1, 7, 8, 9, rate - 1]
            };
            for len in lens {
                let data: Vec<u8> = (0..len).map(|i| i as u8 ^ 0x5a).collect();
                let mut state = [0u64; 25];
                for (k, byte) in data.iter().enumerate() {
                    state[k / 8] ^= u64::from(*byte) << (8 * (k % 8));
                }
                pad(&mut state, len, algorithm);
                keccak::Keccak::new().with_f1600(|f| f(&mut state));
                let n = algorithm.chaining_len();
                let ours: Vec<u8> = (0..n)
                    .map(|k| (state[k / 8] >> (8 * (k % 8))) as u8)
                    .collect();
                assert_eq!(
                    ours,
                    plain_hash(algorithm, &data, n),
                    "{algorithm}, {len} bytes"
                );
            }
        }
    }
}
