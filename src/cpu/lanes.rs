//! The CPU leaves eight at a time: on x86-64 with AVX-512, eight consecutive
//! leaves share one eight-lane Keccak permutation (`keccak_x8`). Within a
//! stripe their eight blocks lie side by side, so one gather per lane loads
//! the same word of all eight blocks.
//!
//! Used when B is a multiple of the rate (the default B is the rate), so that
//! every block starts at position 0 of the sponge; `cpu.rs` keeps the general
//! path (the sha3 crate's sponges) for every other case.

use std::arch::x86_64::*;

use rayon::prelude::*;

use crate::params::TreeParams;

use super::keccak_x8::{self, StateX8, f1600_x8};

/// Eight leaves' states, lane-major: `[k][i]` is lane k of leaf i.
type Group = [[u64; 8]; 25];

/// Groups per rayon task at most: as many leaves as the portable path's tasks.
const MAX_GROUPS_PER_TASK: usize = super::MAX_GROUP_LEAVES / 8;

/// True when these parameters can take the eight-lane path on this CPU.
pub fn supported(params: &TreeParams) -> bool {
    params.height() > 0
        && params.leaf_count() >= 8
        && params
            .block_size()
            .is_multiple_of(params.algorithm().rate())
        && keccak_x8::is_available()
}

/// Every leaf's state while M is absorbed, eight leaves to a group.
pub struct LaneLeaves<'a> {
    params: &'a TreeParams,
    pool: &'a rayon::ThreadPool,
    groups: Vec<Group>,
    /// Bytes of M absorbed so far (a whole number of blocks until the last piece).
    message_len: u64,
}

impl<'a> LaneLeaves<'a> {
    /// Call only when [`supported`] says so.
    pub fn new(params: &'a TreeParams, pool: &'a rayon::ThreadPool) -> Self {
        debug_assert!(supported(params));
        let groups = (params.leaf_count() as usize).div_ceil(8);
        LaneLeaves {
            params,
            pool,
            groups: vec![[[0; 8]; 25]; groups],
            message_len: 0,
        }
    }

    /// Absorbs the next piece of M (it starts on a block boundary).
    pub fn absorb(&mut self, piece: &[u8]) {
        let b = self.params.block_size();
        let leaf_count = self.params.leaf_count();
        let first = self.message_len / b as u64;
        let end = first + piece.len().div_ceil(b) as u64;
        self.message_len += piece.len() as u64;
        let rate = self.params.algorithm().rate();
        let per_task = self
            .groups
            .len()
            .div_ceil(self.pool.current_num_threads() * 4)
            .clamp(1, MAX_GROUPS_PER_TASK);
        let groups = &mut self.groups;
        self.pool.install(|| {
            groups
                .par_chunks_mut(per_task)
                .enumerate()
                .for_each(|(t, task)| {
                    let first_group = t * per_task;
                    // Stripe by stripe, so that reads are sequential.
                    let mut stripe = first - first % leaf_count;
                    while stripe < end {
                        for (g, group) in task.iter_mut().enumerate() {
                            let leaf0 = ((first_group + g) * 8) as u64;
                            let i0 = stripe + leaf0;
                            let whole = i0 >= first
                                && leaf0 + 8 <= leaf_count
                                && ((i0 + 8 - first) as usize) * b <= piece.len();
                            if whole {
                                let at = ((i0 - first) as usize) * b;
                                // SAFETY: `supported` checked that the CPU has AVX-512F.
                                unsafe { absorb_eight(group, &piece[at..at + 8 * b], b, rate) };
                            } else {
                                for lane in 0..8 {
                                    let leaf = leaf0 + lane as u64;
                                    let i = stripe + leaf;
                                    if leaf >= leaf_count || i < first || i >= end {
                                        continue;
                                    }
                                    let at = ((i - first) as usize) * b;
                                    let block = &piece[at..(at + b).min(piece.len())];
                                    absorb_one(group, lane, block, rate);
                                }
                            }
                        }
                        stripe += leaf_count;
                    }
                });
        });
    }

    /// Pads every leaf and writes its chaining value (c bytes each, in leaf
    /// order) into a new buffer.
    pub fn finish(self) -> Vec<u8> {
        let params = self.params;
        let c = params.algorithm().chaining_len();
        let leaf_count = params.leaf_count() as usize;
        let mut out = vec![0u8; leaf_count * c];
        let groups = &self.groups;
        self.pool.install(|| {
            out.par_chunks_mut(c).enumerate().for_each(|(leaf, cv)| {
                let group = &groups[leaf / 8];
                let mut state: [u64; 25] = std::array::from_fn(|k| group[k][leaf % 8]);
                let len = leaf_len(params, self.message_len, leaf as u64);
                let pos = (len % params.algorithm().rate() as u64) as usize;
                pad(&mut state, pos, params);
                permute(&mut state);
                for (k, byte) in cv.iter_mut().enumerate() {
                    *byte = (state[k / 8] >> (8 * (k % 8))) as u8;
                }
            });
        });
        out
    }
}

/// The bytes leaf `leaf` holds of a message of `message_len` bytes.
fn leaf_len(params: &TreeParams, message_len: u64, leaf: u64) -> u64 {
    let b = params.block_size() as u64;
    let l = params.leaf_count();
    let blocks = message_len.div_ceil(b);
    let own = (blocks + l - 1 - leaf) / l;
    let mut len = own * b;
    if blocks > 0 && (blocks - 1) % l == leaf {
        len -= blocks * b - message_len;
    }
    len
}

/// FIPS 202 padding at byte `pos` of the rate: the domain bits, then the final 1.
fn pad(state: &mut [u64; 25], pos: usize, params: &TreeParams) {
    let domain: u64 = if params.algorithm().is_xof() {
        0x1f
    } else {
        0x06
    };
    let rate = params.algorithm().rate();
    state[pos / 8] ^= domain << (8 * (pos % 8));
    state[rate / 8 - 1] ^= 1 << 63;
}

fn permute(state: &mut [u64; 25]) {
    keccak::Keccak::new().with_f1600(|f| f(state));
}

/// One leaf's block (at most B bytes, starting at sponge position 0, since B
/// is a multiple of the rate), absorbed lane by lane into its group.
fn absorb_one(group: &mut Group, lane: usize, block: &[u8], rate: usize) {
    let mut state: [u64; 25] = std::array::from_fn(|k| group[k][lane]);
    let mut chunks = block.chunks_exact(rate);
    for chunk in &mut chunks {
        xor_bytes(&mut state, chunk);
        permute(&mut state);
    }
    // Only the message's last block is short; its tail waits for the padding.
    xor_bytes(&mut state, chunks.remainder());
    for (k, lanes) in group.iter_mut().enumerate() {
        lanes[lane] = state[k];
    }
}

/// XORs `bytes` (at most a rate's worth) into the state from position 0.
fn xor_bytes(state: &mut [u64; 25], bytes: &[u8]) {
    for (k, word) in bytes.chunks(8).enumerate() {
        let mut le = [0u8; 8];
        le[..word.len()].copy_from_slice(word);
        state[k] ^= u64::from_le_bytes(le);
    }
}

/// Eight full blocks (`blocks` holds them back to back, `b` bytes each),
/// absorbed by the eight leaves of `group` at once. Callers without AVX-512F
/// enabled must check [`supported`] first.
#[target_feature(enable = "avx512f")]
fn absorb_eight(group: &mut Group, blocks: &[u8], b: usize, rate: usize) {
    match rate {
        72 => absorb_eight_rate::<72>(group, blocks, b),
        104 => absorb_eight_rate::<104>(group, blocks, b),
        136 => absorb_eight_rate::<136>(group, blocks, b),
        144 => absorb_eight_rate::<144>(group, blocks, b),
        168 => absorb_eight_rate::<168>(group, blocks, b),
        _ => unreachable!("the FIPS 202 rates are 72, 104, 136, 144 and 168"),
    }
}

/// [`absorb_eight`] for one rate, so that the lane loop has a constant bound.
#[target_feature(enable = "avx512f")]
fn absorb_eight_rate<const RATE: usize>(group: &mut Group, blocks: &[u8], b: usize) {
    assert!(blocks.len() == 8 * b && b.is_multiple_of(RATE));
    let step = b as i64;
    let offsets = _mm512_set_epi64(
        7 * step,
        6 * step,
        5 * step,
        4 * step,
        3 * step,
        2 * step,
        step,
        0,
    );
    let mut a: StateX8 = [_mm512_setzero_si512(); 25];
    for (lane, column) in a.iter_mut().zip(group.iter()) {
        // SAFETY: `column` is 8 × 8 readable bytes (an unaligned load is allowed).
        *lane = unsafe { _mm512_loadu_si512(column.as_ptr().cast()) };
    }
    for start in (0..b).step_by(RATE) {
        for (w, lane) in a.iter_mut().enumerate().take(RATE / 8) {
            // SAFETY: the eight addresses are blocks + j·b + start + 8w for j < 8;
            // start + 8w + 8 <= b (start < b, b a multiple of RATE, w < RATE / 8),
            // so every 8-byte word read lies inside `blocks` (asserted above).
            let words = unsafe {
                _mm512_i64gather_epi64::<1>(offsets, blocks.as_ptr().add(start + 8 * w).cast())
            };
            *lane = _mm512_xor_si512(*lane, words);
        }
        f1600_x8(&mut a);
    }
    for (column, lane) in group.iter_mut().zip(a) {
        // SAFETY: `column` is 8 × 8 writable bytes.
        unsafe { _mm512_storeu_si512(column.as_mut_ptr().cast(), lane) };
    }
}
