//! The fastest scalar sponge on this target, for what one core hashes alone:
//! height 0 (plain SHA-3 / SHAKE), the parent levels, and the portable
//! engine's leaves. On x86-64 it is CRYPTOGAMS' Keccak assembly (the code
//! of OpenSSL's SHA-3, with lane complementing and full unrolling) through
//! the `sha3-asm` crate; elsewhere it is RustCrypto's sponge itself.
//!
//! `Fast<S>` takes its function from the RustCrypto sponge `S`, so the list
//! of functions stays in `with_sponge!`.

use crate::sponge::Sponge;

/// The fastest sponge for `S`'s function here.
#[cfg(target_arch = "x86_64")]
pub type Fast<S> = asm::AsmSponge<S>;
/// The fastest sponge for `S`'s function here.
#[cfg(not(target_arch = "x86_64"))]
pub type Fast<S> = S;

#[cfg(target_arch = "x86_64")]
mod asm {
    use std::marker::PhantomData;

    use sha3_asm::{sha3_absorb, sha3_squeeze};

    use super::Sponge;
    use crate::params::Algorithm;
    use crate::sponge::pad;

    /// The largest rate (SHAKE128's), in bytes.
    const MAX_RATE: usize = 168;
    /// A block of zeros: absorbing it is a bare permutation.
    const ZEROS: [u8; MAX_RATE] = [0; MAX_RATE];

    /// A sponge for `S`'s function on the assembly permutation: the state,
    /// with the bytes of an incomplete block already XORed in, and their
    /// count (the same 208 bytes as RustCrypto's, so a leaf costs no more).
    pub struct AsmSponge<S> {
        state: [u64; 25],
        pos: usize,
        function: PhantomData<fn() -> S>,
    }

    impl<S> Clone for AsmSponge<S> {
        fn clone(&self) -> Self {
            AsmSponge {
                state: self.state,
                pos: self.pos,
                function: PhantomData,
            }
        }
    }

    impl<S> Default for AsmSponge<S> {
        fn default() -> Self {
            AsmSponge {
                state: [0; 25],
                pos: 0,
                function: PhantomData,
            }
        }
    }

    impl<S> AsmSponge<S> {
        /// XORs `bytes` into the state from byte `self.pos` on (within the rate).
        fn xor_in(&mut self, bytes: &[u8]) {
            for (k, byte) in (self.pos..).zip(bytes) {
                self.state[k / 8] ^= u64::from(*byte) << (8 * (k % 8));
            }
            self.pos += bytes.len();
        }
    }

    impl<S: Sponge> Sponge for AsmSponge<S> {
        const ALGORITHM: Algorithm = S::ALGORITHM;

        fn absorb(&mut self, mut data: &[u8]) {
            let rate = Self::ALGORITHM.rate();
            if self.pos > 0 {
                let take = (rate - self.pos).min(data.len());
                self.xor_in(&data[..take]);
                data = &data[take..];
                if self.pos < rate {
                    return;
                }
                sha3_absorb(&mut self.state, &ZEROS[..rate], rate);
                self.pos = 0;
            }
            // Every whole block, then the rest XORed in to wait for more.
            let rest = sha3_absorb(&mut self.state, data, rate);
            self.xor_in(&data[data.len() - rest..]);
        }

        fn squeeze_into(mut self, out: &mut [u8]) {
            let rate = Self::ALGORITHM.rate();
            pad(&mut self.state, self.pos, Self::ALGORITHM);
            sha3_absorb(&mut self.state, &ZEROS[..rate], rate);
            // Squeezing starts from the state as it is, and permutes between blocks.
            sha3_squeeze(&mut self.state, out, rate);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Algorithm;
    use crate::sponge::with_sponge;

    /// The fast sponge against RustCrypto for every function, at lengths
    /// around the rate, fed whole and in uneven pieces, with long outputs.
    #[test]
    fn fast_sponges_match_rustcrypto() {
        let data: Vec<u8> = (0..2000u32).map(|i| (i * 31 + 7) as u8).collect();
        for algorithm in Algorithm::ALL {
            let rate = algorithm.rate();
            let out_len = if algorithm.is_xof() {
                3 * rate + 5
            } else {
                algorithm.chaining_len()
            };
            for len in [0, 1, rate - 1, rate, rate + 1, 2 * rate, 5 * rate + 3, 2000] {
                let input = &data[..len];
                with_sponge!(algorithm, S => {
                    let mut want = vec![0u8; out_len];
                    S::hash_into(input, &mut want);
                    let mut whole = vec![0u8; out_len];
                    Fast::<S>::hash_into(input, &mut whole);
                    assert_eq!(whole, want, "{algorithm}, {len} bytes");
                    for step in [1, 7, rate - 1, rate + 3] {
                        let mut sponge = Fast::<S>::default();
                        input.chunks(step).for_each(|piece| sponge.absorb(piece));
                        let mut pieces = vec![0u8; out_len];
                        sponge.clone().squeeze_into(&mut pieces);
                        assert_eq!(pieces, want, "{algorithm}, {len} bytes in pieces of {step}");
                    }
                });
            }
        }
    }
}
