//! The scalar sponge of one core, for what one core hashes alone: height 0
//! (plain SHA-3 / SHAKE), the parent levels, and the portable kernel's
//! leaves. It keeps the Keccak state in the open, so that a leaf can be
//! handed to another engine. On x86-64 the permutation is CRYPTOGAMS' Keccak
//! assembly (the code of OpenSSL's SHA-3, with lane complementing and full
//! unrolling) through the `sha3-asm` crate; elsewhere, and under Miri
//! (which cannot run foreign code), it is `keccak.rs`'s one-state
//! permutation (`p1600`: the portable scalar code there).
//!
//! `Fast<S>` takes its function from the RustCrypto sponge `S`, so the list
//! of functions stays in `with_sponge!`, and its rate, rounds and domain
//! byte from that function's [`SpongeSpec`], a constant of each `Fast<S>`.

use std::marker::PhantomData;

use crate::params::Algorithm;
use crate::sponge::{Rounds, Sponge, SpongeSpec};

/// A sponge for `S`'s function: the state, with the bytes of an unfinished
/// rate block already XORed in, and their count (the same 208 bytes as
/// RustCrypto's, so a leaf costs no more).
pub(super) struct Fast<S> {
    state: [u64; 25],
    /// The next free byte of the rate; always less than the rate.
    pos: usize,
    function: PhantomData<fn() -> S>,
}

impl<S> Clone for Fast<S> {
    fn clone(&self) -> Self {
        Fast {
            state: self.state,
            pos: self.pos,
            function: PhantomData,
        }
    }
}

impl<S> Default for Fast<S> {
    fn default() -> Self {
        Fast {
            state: [0; 25],
            pos: 0,
            function: PhantomData,
        }
    }
}

impl<S: Sponge> Fast<S> {
    /// `S`'s sponge, a constant of each `Fast<S>`: its rate and rounds are
    /// constants of the monomorphised code, never read at run time. Its
    /// permutation is Keccak-f\[1600\], the only one the assembly runs:
    /// checked when `Fast<S>` is compiled.
    const SPEC: SpongeSpec = {
        let spec = S::ALGORITHM.sponge_spec();
        assert!(
            matches!(spec.rounds(), Rounds::Keccak24),
            "the assembly permutation is Keccak-f[1600]"
        );
        spec
    };

    /// The sponge whose state is `state` after absorbing `absorbed` bytes
    /// (which say where it stands in the rate).
    pub(super) fn from_state(state: [u64; 25], absorbed: u64) -> Self {
        Fast {
            state,
            pos: (absorbed % Self::SPEC.rate() as u64) as usize,
            function: PhantomData,
        }
    }
}

impl<S> Fast<S> {
    /// The Keccak state, with the bytes of an unfinished rate block XORed in.
    pub(super) fn state(&self) -> [u64; 25] {
        self.state
    }

    /// XORs `bytes` into the state from byte `self.pos` on (within the rate).
    fn xor_in(&mut self, bytes: &[u8]) {
        for (k, byte) in (self.pos..).zip(bytes) {
            self.state[k / 8] ^= u64::from(*byte) << (8 * (k % 8));
        }
        self.pos += bytes.len();
    }
}

impl<S: Sponge> Sponge for Fast<S> {
    const ALGORITHM: Algorithm = S::ALGORITHM;

    fn absorb(&mut self, mut data: &[u8]) {
        let (spec, rate) = (&Self::SPEC, Self::SPEC.rate());
        if self.pos > 0 {
            let take = (rate - self.pos).min(data.len());
            self.xor_in(&data[..take]);
            data = &data[take..];
            if self.pos < rate {
                return;
            }
            permutation::permute(&mut self.state, spec);
            self.pos = 0;
        }
        // Every whole block, then the rest XORed in to wait for more.
        let rest = permutation::absorb_blocks(&mut self.state, data, spec);
        self.xor_in(&data[data.len() - rest..]);
    }

    fn squeeze_into(mut self, out: &mut [u8]) {
        let spec = &Self::SPEC;
        spec.pad(&mut self.state, self.pos);
        permutation::permute(&mut self.state, spec);
        permutation::squeeze(&mut self.state, out, spec);
    }
}

/// The three steps of a sponge on the assembly permutation, which is
/// Keccak-f\[1600\] whatever `spec` says: [`Fast::SPEC`] holds only such
/// specs.
#[cfg(all(target_arch = "x86_64", not(target_vendor = "apple"), not(miri)))]
mod permutation {
    use sha3_asm::{sha3_absorb, sha3_squeeze};

    use crate::sponge::{MAX_RATE, SpongeSpec};

    /// A block of zeros: absorbing it is a bare permutation.
    const ZEROS: [u8; MAX_RATE] = [0; MAX_RATE];

    /// Keccak-f[1600] on `state`.
    #[inline]
    pub(super) fn permute(state: &mut [u64; 25], spec: &SpongeSpec) {
        sha3_absorb(state, &ZEROS[..spec.rate()], spec.rate());
    }

    /// XORs in and permutes every whole rate block of `data`: the count of
    /// bytes left over at its end.
    #[inline]
    pub(super) fn absorb_blocks(state: &mut [u64; 25], data: &[u8], spec: &SpongeSpec) -> usize {
        sha3_absorb(state, data, spec.rate())
    }

    /// Writes `out` from the state as it is, permuting between rate blocks.
    #[inline]
    pub(super) fn squeeze(state: &mut [u64; 25], out: &mut [u8], spec: &SpongeSpec) {
        sha3_squeeze(state, out, spec.rate());
    }
}

/// The three steps of a sponge on `keccak.rs`'s one-state permutation,
/// with `spec`'s rounds.
#[cfg(any(not(all(target_arch = "x86_64", not(target_vendor = "apple"))), miri))]
mod permutation {
    use crate::cpu::keccak::p1600;
    use crate::sponge::SpongeSpec;

    /// Keccak-p[1600, n_r] on `state`.
    #[inline]
    pub(super) fn permute(state: &mut [u64; 25], spec: &SpongeSpec) {
        p1600(state, spec.rounds());
    }

    /// XORs in and permutes every whole rate block of `data`: the count of
    /// bytes left over at its end.
    #[inline]
    pub(super) fn absorb_blocks(state: &mut [u64; 25], data: &[u8], spec: &SpongeSpec) -> usize {
        let mut blocks = data.chunks_exact(spec.rate());
        for block in &mut blocks {
            for (lane, word) in state.iter_mut().zip(block.chunks_exact(8)) {
                *lane ^= u64::from_le_bytes(word.try_into().unwrap_or_default());
            }
            p1600(state, spec.rounds());
        }
        blocks.remainder().len()
    }

    /// Writes `out` from the state as it is, permuting between rate blocks.
    #[inline]
    pub(super) fn squeeze(state: &mut [u64; 25], out: &mut [u8], spec: &SpongeSpec) {
        for (k, block) in out.chunks_mut(spec.rate()).enumerate() {
            if k > 0 {
                p1600(state, spec.rounds());
            }
            for (byte, at) in block.iter_mut().zip(0..) {
                *byte = (state[at / 8] >> (8 * (at % 8))) as u8;
            }
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
            // Under Miri, where a permutation takes a good part of a
            // second, one length on either side of the rate.
            let lens: &[usize] = if cfg!(miri) {
                &[1, rate + 1]
            } else {
                &[0, 1, rate - 1, rate, rate + 1, 2 * rate, 5 * rate + 3, 2000]
            };
            for &len in lens {
                let input = &data[..len];
                with_sponge!(algorithm, S => {
                    let mut want = vec![0u8; out_len];
                    S::hash_into(input, &mut want);
                    let mut whole = vec![0u8; out_len];
                    Fast::<S>::hash_into(input, &mut whole);
                    assert_eq!(whole, want, "{algorithm}, {len} bytes");
                    let steps: &[usize] = if cfg!(miri) { &[7] } else { &[1, 7, rate - 1, rate + 3] };
                    for &step in steps {
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

    /// A sponge rebuilt from its state and its count of bytes absorbed goes
    /// on as the original would, at every position in the rate.
    #[test]
    fn a_sponge_goes_on_from_its_state() {
        let data: Vec<u8> = (0..if cfg!(miri) { 300 } else { 700u32 })
            .map(|i| (i * 13 + 1) as u8)
            .collect();
        with_sponge!(Algorithm::Sha3_384, S => {
            let rate = S::ALGORITHM.rate();
            let mut want = [0u8; 48];
            S::hash_into(&data, &mut want);
            // Under Miri, where a permutation takes a good part of a
            // second, a cut within the first block and one past it.
            let cuts: &[usize] = if cfg!(miri) {
                &[1, rate + 1]
            } else {
                &[0, 1, rate - 1, rate, rate + 1, 3 * rate + 7, 700]
            };
            for &cut in cuts {
                let mut first = Fast::<S>::default();
                first.absorb(&data[..cut]);
                let mut second = Fast::<S>::from_state(first.state(), cut as u64);
                second.absorb(&data[cut..]);
                let mut got = [0u8; 48];
                second.squeeze_into(&mut got);
                assert_eq!(got, want, "cut after {cut} bytes");
            }
        });
    }
}
