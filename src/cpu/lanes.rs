//! The lane kernels: `W` neighbouring leaves share one `W`-lane Keccak
//! permutation (four with AVX2, `keccak_x4`; eight with AVX-512,
//! `keccak_x8`; two with ARMv8.2 SHA3, `keccak_x2`). Within a stripe their `W` blocks lie side by side, so the
//! kernel loads them straight from the piece.
//!
//! Used only where B is a multiple of the rate ([`Platform::kernel`]), so
//! that every block starts at position 0 of the sponge. Blocks at the edges
//! of a piece, and the message's short last block, are absorbed one leaf at a
//! time with the path's one-state permutation (`LaneKernel::one_state`, `platform.rs`),
//! into the same lane-major states. At the end each leaf is padded where its
//! bytes end, and one `W`-lane permutation finishes the whole group.
//!
//! [`Platform::kernel`]: super::platform::Platform::kernel

use super::platform::LaneKernel;
use super::units::FreshIsZero;
use super::walk::Absorb;
use crate::params::{Algorithm, TreeParams};
use crate::sponge::SpongeSpec;

/// `W` leaves' states, lane-major: `.0[k][i]` is lane k of leaf i. Aligned
/// to a cache line, so that the kernels' 32- and 64-byte loads of a lane
/// never straddle two lines.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub(super) struct Group<const W: usize>([[u64; W]; 25]);

impl<const W: usize> Group<W> {
    /// Leaf `lane`'s state.
    fn leaf(&self, lane: usize) -> [u64; 25] {
        std::array::from_fn(|k| self.0[k][lane])
    }

    fn set_leaf(&mut self, lane: usize, state: [u64; 25]) {
        for (lanes, word) in self.0.iter_mut().zip(state) {
            lanes[lane] = word;
        }
    }
}

// SAFETY: 25·W words: all zero is a value, and `W` leaves that have
// absorbed nothing; no drop glue; aligned to 64 bytes.
unsafe impl<const W: usize> FreshIsZero for Group<W> {}

/// The lane kernel of `W`-leaf groups, permuted by `K`, each leaf through
/// the sponge `spec`.
#[derive(Clone)]
pub(super) struct Lanes<K, const W: usize> {
    kernel: K,
    spec: SpongeSpec,
    block_size: usize,
}

impl<K: LaneKernel<W>, const W: usize> Lanes<K, W> {
    /// The kernel for the leaves of `params` (blocks of B bytes).
    pub(super) fn new(kernel: K, params: &TreeParams) -> Self {
        debug_assert!(
            params
                .block_size()
                .is_multiple_of(params.algorithm().rate())
        );
        Lanes {
            kernel,
            spec: params.algorithm().sponge_spec(),
            block_size: params.block_size(),
        }
    }

    /// The kernel for parent nodes of `algorithm`, `W` at a time: its whole
    /// blocks are rate blocks.
    pub(super) fn for_nodes(kernel: K, algorithm: Algorithm) -> Self {
        let spec = algorithm.sponge_spec();
        Lanes {
            kernel,
            spec,
            block_size: spec.rate(),
        }
    }
}

impl<K: LaneKernel<W>, const W: usize> Absorb for Lanes<K, W> {
    const WIDTH: usize = W;
    type Unit = Group<W>;

    fn absorb_blocks(&self, unit: &mut Self::Unit, blocks: &[u8]) {
        let b = self.block_size;
        self.kernel
            .absorb_blocks(&mut unit.0, blocks, b, b, &self.spec);
    }

    fn absorb_leaf(&self, unit: &mut Self::Unit, lane: usize, bytes: &[u8]) {
        let rate = self.spec.rate();
        let mut tail = bytes.len();
        if bytes.len() >= rate {
            let mut state = unit.leaf(lane);
            tail =
                self.kernel
                    .one_state()
                    .absorb_blocks(&mut state, bytes, rate, self.spec.rounds());
            unit.set_leaf(lane, state);
        }
        // Only the message's last block is short; its tail waits for the
        // padding, XORed into the lane-major words where they are (a parent
        // node of D·c bytes below the rate is all tail).
        let tail = &bytes[bytes.len() - tail..];
        for (words, bytes) in unit.0.iter_mut().zip(tail.chunks(8)) {
            words[lane] ^= le_word(bytes);
        }
    }

    fn finish_unit(&self, unit: &Self::Unit, leaf_lens: &[u64], out: &mut [u8]) {
        let rate = self.spec.rate();
        let out_len = out.len() / leaf_lens.len();
        debug_assert!(
            out_len <= rate,
            "a leaf outputs c bytes, less than the rate"
        );
        // Each leaf padded where its bytes end, in the lane-major words,
        // then one permutation for all. (Taking each leaf's 25 words out
        // and back, and writing the outputs byte by byte, cost as much as
        // the permutation: 200 files of 1-8 MiB at H = 8, one block a leaf.)
        let mut group = unit.0;
        for (lane, len) in leaf_lens.iter().enumerate() {
            for (word, bits) in self.spec.padding((len % rate as u64) as usize) {
                group[word][lane] ^= bits;
            }
        }
        self.kernel.permute(&mut group, self.spec.rounds());
        for (lane, cv) in out.chunks_mut(out_len).enumerate() {
            for (word, bytes) in group.iter().zip(cv.chunks_mut(8)) {
                bytes.copy_from_slice(&word[lane].to_le_bytes()[..bytes.len()]);
            }
        }
    }
    fn leaf_state(&self, unit: &Self::Unit, lane: usize) -> [u64; 25] {
        unit.leaf(lane)
    }

    /// Where a leaf stands in its rate needs no record here: B is a multiple
    /// of the rate, so only the message's short last block leaves a leaf
    /// mid-rate, and its padding position comes from the leaf's length.
    fn set_leaf_state(&self, unit: &mut Self::Unit, lane: usize, state: [u64; 25], _absorbed: u64) {
        unit.set_leaf(lane, state);
    }
}

/// Up to eight bytes as a little-endian word (missing bytes zero).
fn le_word(bytes: &[u8]) -> u64 {
    let mut le = [0u8; 8];
    le[..bytes.len()].copy_from_slice(bytes);
    u64::from_le_bytes(le)
}
