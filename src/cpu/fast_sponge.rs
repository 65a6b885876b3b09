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
    use crate::sponge::pad_block;

    /// The largest rate (SHAKE128's), in bytes.
    const MAX_RATE: usize = 168;

    /// A sponge for `S`'s function on the assembly permutation: the state,
    /// and the bytes of a block not yet complete.
    pub struct AsmSponge<S> {
        state: [u64; 25],
        pending: [u8; MAX_RATE],
        pending_len: usize,
        function: PhantomData<fn() -> S>,
    }

    impl<S> Clone for AsmSponge<S> {
        fn clone(&self) -> Self {
            AsmSponge {
                state: self.state,
                pending: self.pending,
                pending_len: self.pending_len,
                function: PhantomData,
            }
        }
    }

    impl<S> Default for AsmSponge<S> {
        fn default() -> Self {
            AsmSponge {
                state: [0; 25],
                pending: [0; MAX_RATE],
                pending_len: 0,
                function: PhantomData,
            }
        }
    }

    impl<S: Sponge> Sponge for AsmSponge<S> {
        const ALGORITHM: Algorithm = S::ALGORITHM;

        fn absorb(&mut self, mut data: &[u8]) {
            let rate = Self::ALGORITHM.rate();
            if self.pending_len > 0 {
                let take = (rate - self.pending_len).min(data.len());
                self.pending[self.pending_len..][..take].copy_from_slice(&data[..take]);
                self.pending_len += take;
                data = &data[take..];
                if self.pending_len < rate {
                    return;
                }
                sha3_absorb(&mut self.state, &self.pending[..rate], rate);
                self.pending_len = 0;
            }
            // Every whole block, then keep the rest for later.
            let rest = sha3_absorb(&mut self.state, data, rate);
            self.pending[..rest].copy_from_slice(&data[data.len() - rest..]);
            self.pending_len = rest;
        }

        fn squeeze_into(mut self, out: &mut [u8]) {
            let rate = Self::ALGORITHM.rate();
            let block = &mut self.pending[..rate];
            block[self.pending_len..].fill(0);
            pad_block(block, self.pending_len, Self::ALGORITHM);
            sha3_absorb(&mut self.state, block, rate);
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
