//! A Keccak sponge on bytes with any rate, a round count of 12 or 24, and
//! the domain byte given when it is padded: the standard functions' final
//! nodes, TurboSHAKE over a whole message, and chunks the lane kernels
//! leave over. Its permutation is the fastest one-state kernel this CPU
//! has ([`OneState::best`]), which absorbs a run of whole blocks in one
//! call.

use crate::cpu::keccak::OneState;
use crate::sponge::Rounds;

/// The state of one sponge and how far into its rate it stands.
#[derive(Clone)]
pub(crate) struct ByteSponge {
    state: [u64; 25],
    /// Bytes absorbed into the current rate block.
    pos: usize,
    rate: usize,
    rounds: Rounds,
    kernel: OneState,
}

impl ByteSponge {
    pub(crate) fn new(rate: usize, rounds: Rounds) -> ByteSponge {
        ByteSponge::on(OneState::best(), rate, rounds)
    }

    /// The sponge on a given kernel: the tests run each, the measurements
    /// time each.
    pub(crate) fn on(kernel: OneState, rate: usize, rounds: Rounds) -> ByteSponge {
        ByteSponge {
            state: [0; 25],
            pos: 0,
            rate,
            rounds,
            kernel,
        }
    }

    /// Absorbs the next bytes.
    pub(crate) fn absorb(&mut self, mut data: &[u8]) {
        if self.pos > 0 {
            // The rest of the current rate block.
            let take = (self.rate - self.pos).min(data.len());
            self.xor_in(&data[..take]);
            data = &data[take..];
            if self.pos < self.rate {
                return;
            }
            self.kernel.permute(&mut self.state, self.rounds);
            self.pos = 0;
        }
        // Every whole block in one call, then the rest XORed in to wait.
        let rest = self
            .kernel
            .absorb_blocks(&mut self.state, data, self.rate, self.rounds);
        self.xor_in(&data[data.len() - rest..]);
    }

    /// XORs `bytes` into the state from byte `self.pos` on (within the
    /// rate): a byte at a time up to a lane boundary, then whole lanes,
    /// then the last bytes.
    fn xor_in(&mut self, bytes: &[u8]) {
        let start = self.pos;
        let (head, body) = bytes.split_at(((8 - start % 8) % 8).min(bytes.len()));
        for (k, &byte) in head.iter().enumerate() {
            self.xor_byte(start + k, byte);
        }
        let mut lane = (start + head.len()) / 8;
        let mut words = body.chunks_exact(8);
        for word in &mut words {
            self.state[lane] ^= u64::from_le_bytes(word.try_into().expect("8 bytes"));
            lane += 1;
        }
        for (k, &byte) in words.remainder().iter().enumerate() {
            self.xor_byte(8 * lane + k, byte);
        }
        self.pos = start + bytes.len();
    }

    fn xor_byte(&mut self, at: usize, byte: u8) {
        self.state[at / 8] ^= u64::from(byte) << (8 * (at % 8));
    }

    /// Pads with domain byte `domain` (then pad10*1's last bit) and writes
    /// `out.len()` bytes of output.
    pub(crate) fn finish(mut self, domain: u8, out: &mut [u8]) {
        self.xor_byte(self.pos, domain);
        self.xor_byte(self.rate - 1, 0x80);
        self.kernel.permute(&mut self.state, self.rounds);
        for (k, block) in out.chunks_mut(self.rate).enumerate() {
            if k > 0 {
                self.kernel.permute(&mut self.state, self.rounds);
            }
            for (i, byte) in block.iter_mut().enumerate() {
                *byte = (self.state[i / 8] >> (8 * (i % 8))) as u8;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use treehash_reference::keccak::sponge;

    /// `kernel`'s sponge against the reference at sizes around the rate
    /// and over many blocks, fed whole, in two parts, or in 32-byte
    /// chaining values and odd pieces.
    fn matches_the_reference(kernel: OneState) {
        let data: Vec<u8> = (0..40 * 168 + 5).map(|i| (i * 7 + 3) as u8).collect();
        use Rounds::{Keccak24, Turbo12};
        for (rate, rounds, domain) in [
            (168, Turbo12, 0x0b),
            (136, Keccak24, 0x1f),
            (136, Turbo12, 0x07),
            (72, Keccak24, 0x06),
            (144, Keccak24, 0x04),
        ] {
            for len in [0, 1, rate - 1, rate, rate + 1, 2 * rate, 999, 40 * rate + 5] {
                let message = &data[..len];
                let split = (len / 2 + 1).min(len);
                let feeds: [(&str, Vec<&[u8]>); 5] = [
                    ("whole", vec![message]),
                    ("halves", vec![&message[..split], &message[split..]]),
                    ("32-byte pieces", message.chunks(32).collect()),
                    ("7-byte pieces", message.chunks(7).collect()),
                    ("rate + 1 pieces", message.chunks(rate + 1).collect()),
                ];
                let want = sponge(rate, rounds.count(), domain, &data[..len], 2 * rate + 5);
                for (feed, pieces) in feeds {
                    let mut s = ByteSponge::on(kernel, rate, rounds);
                    pieces.into_iter().for_each(|piece| s.absorb(piece));
                    let mut out = vec![0u8; 2 * rate + 5];
                    s.finish(domain, &mut out);
                    assert_eq!(
                        out, want,
                        "{kernel:?}, rate {rate}, {rounds:?}, len {len}, {feed}"
                    );
                }
            }
        }
    }

    #[test]
    fn matches_the_reference_sponge_however_fed() {
        matches_the_reference(OneState::Portable);
        // The kernel `new` takes: AVX-512's where the CPU has it.
        matches_the_reference(OneState::best());
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    #[cfg_attr(
        not(treehash_test_avx512),
        ignore = "the CPU that built this test has no AVX-512F (build.rs)"
    )]
    #[cfg_attr(
        all(miri, treehash_test_avx512),
        ignore = "Miri runs no AVX-512 intrinsics (scripts/ci-miri.sh)"
    )]
    fn the_avx512_sponge_matches_the_reference_however_fed() {
        use crate::cpu::keccak::avx512_for_test;
        let avx512 = avx512_for_test("the_avx512_sponge_matches_the_reference_however_fed")
            .expect("avx512_for_test fails where this test runs without AVX-512F");
        matches_the_reference(OneState::Avx512(avx512));
    }
}
