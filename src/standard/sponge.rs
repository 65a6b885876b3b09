//! A Keccak sponge on bytes with any rate, a round count of 12 or 24, and
//! the domain byte given when it is padded: the standard functions' final
//! nodes, TurboSHAKE over a whole message, and chunks the lane engines
//! leave over.

/// The state of one sponge and how far into its rate it stands.
#[derive(Clone)]
pub(crate) struct ByteSponge {
    state: [u64; 25],
    /// Bytes absorbed into the current rate block.
    pos: usize,
    rate: usize,
    rounds: Rounds,
}

use crate::cpu::keccak::p1600;
use crate::sponge::Rounds;

impl ByteSponge {
    pub(crate) fn new(rate: usize, rounds: Rounds) -> ByteSponge {
        ByteSponge {
            state: [0; 25],
            pos: 0,
            rate,
            rounds,
        }
    }

    /// Absorbs the next bytes.
    pub(crate) fn absorb(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            if self.pos == 0 && data.len() >= self.rate {
                // Whole rate blocks, a word at a time.
                let (block, rest) = data.split_at(self.rate);
                for (word, bytes) in self.state.iter_mut().zip(block.chunks_exact(8)) {
                    *word ^= u64::from_le_bytes(bytes.try_into().expect("8 bytes"));
                }
                p1600(&mut self.state, self.rounds);
                data = rest;
                continue;
            }
            let take = (self.rate - self.pos).min(data.len());
            for (k, &byte) in data[..take].iter().enumerate() {
                self.xor_byte(self.pos + k, byte);
            }
            self.pos += take;
            data = &data[take..];
            if self.pos == self.rate {
                p1600(&mut self.state, self.rounds);
                self.pos = 0;
            }
        }
    }

    fn xor_byte(&mut self, at: usize, byte: u8) {
        self.state[at / 8] ^= u64::from(byte) << (8 * (at % 8));
    }

    /// Pads with domain byte `domain` (then pad10*1's last bit) and writes
    /// `out.len()` bytes of output.
    pub(crate) fn finish(mut self, domain: u8, out: &mut [u8]) {
        self.xor_byte(self.pos, domain);
        self.xor_byte(self.rate - 1, 0x80);
        p1600(&mut self.state, self.rounds);
        for (k, block) in out.chunks_mut(self.rate).enumerate() {
            if k > 0 {
                p1600(&mut self.state, self.rounds);
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
    use crate::reference::keccak::sponge;

    #[test]
    fn matches_the_reference_sponge_however_fed() {
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 7 + 3) as u8).collect();
        use Rounds::{Keccak24, Turbo12};
        for (rate, rounds, domain) in [
            (168, Turbo12, 0x0b),
            (136, Keccak24, 0x1f),
            (136, Turbo12, 0x07),
        ] {
            for len in [0, 1, rate - 1, rate, rate + 1, 2 * rate, 999] {
                for split in [0, 1, len / 2, len] {
                    let mut s = ByteSponge::new(rate, rounds);
                    s.absorb(&data[..split.min(len)]);
                    s.absorb(&data[split.min(len)..len]);
                    let mut out = vec![0u8; 2 * rate + 5];
                    s.finish(domain, &mut out);
                    let want = sponge(rate, rounds.count(), domain, &data[..len], out.len());
                    assert_eq!(
                        out, want,
                        "rate {rate}, rounds {rounds:?}, len {len}, split {split}"
                    );
                }
            }
        }
    }
}
