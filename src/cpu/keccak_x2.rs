//! Keccak-p[1600] on two independent states at once with the ARMv8.2 SHA3
//! instructions (as XKCP's `KeccakP-1600-times2-ARMv8A` and KangarooTwelve
//! on ARM): lane k of the two states sits in one 128-bit NEON register, so
//! one instruction advances two leaves or chunks. A round is theta's column
//! parities in ten EOR3 (three-way XOR), its D in five RAX1 (XOR with a
//! rotation by one), rho and pi in 25 XAR (XOR, then rotate), chi in 25
//! BCAX (bit clear and XOR) and iota in one EOR.
//!
//! Blocks are loaded 16 bytes (two words) of each block at a time and
//! paired with ZIP1/ZIP2, so that register w holds word w of both blocks.
//! aarch64 Linux and macOS are little-endian (`cpu.rs` builds this module
//! for little-endian aarch64 only), so the words need no byte swap.

use std::arch::aarch64::*;

use super::keccak::RC;
use super::platform::{LaneKernel, OneState, Sha3};
use crate::sponge::{Rounds, SpongeSpec};

/// Two leaves' states, lane-major: `[k][i]` is lane k of leaf i.
pub(super) type Group2 = [[u64; 2]; 25];

/// Leaf i of `group` absorbs `data[i·stride .. i·stride + len]` from
/// position 0 of the rate: `len` is a multiple of `rate` (whole blocks),
/// `data` holds the two runs (`stride + len` bytes at least), and each
/// block is followed by Keccak-p[1600, `rounds`].
pub(super) fn absorb_blocks(
    sha3: Sha3,
    group: &mut Group2,
    data: &[u8],
    stride: usize,
    len: usize,
    rate: usize,
    rounds: Rounds,
) {
    let _ = sha3;
    // SAFETY: the token proves detection found SHA3 (NEON is in every
    // aarch64 target's base features).
    unsafe { absorb_blocks_sha3(group, data, stride, len, rate, rounds) }
}

/// Keccak-p[1600, `rounds`] on two states.
pub(super) fn permute(sha3: Sha3, group: &mut Group2, rounds: Rounds) {
    let _ = sha3;
    // SAFETY: the token proves detection found SHA3.
    unsafe { permute_sha3(group, rounds) }
}

/// The kernel of 2 sponges per permutation, for the leaves, the parent
/// levels and the standard functions' chunks.
impl LaneKernel<2> for Sha3 {
    fn absorb_blocks(
        self,
        group: &mut Group2,
        data: &[u8],
        stride: usize,
        len: usize,
        spec: &SpongeSpec,
    ) {
        absorb_blocks(self, group, data, stride, len, spec.rate(), spec.rounds());
    }

    fn permute(self, group: &mut Group2, rounds: Rounds) {
        permute(self, group, rounds);
    }

    fn one_state(self) -> OneState {
        OneState::Portable
    }
}

#[target_feature(enable = "sha3")]
fn permute_sha3(group: &mut Group2, rounds: Rounds) {
    let mut a = load(group);
    p1600_x2(&mut a, rounds);
    store(group, &a);
}

#[target_feature(enable = "sha3")]
fn absorb_blocks_sha3(
    group: &mut Group2,
    data: &[u8],
    stride: usize,
    len: usize,
    rate: usize,
    rounds: Rounds,
) {
    let runs = Runs { data, stride, len };
    match rate {
        72 => absorb_rate::<72>(group, runs, rounds),
        104 => absorb_rate::<104>(group, runs, rounds),
        136 => absorb_rate::<136>(group, runs, rounds),
        144 => absorb_rate::<144>(group, runs, rounds),
        168 => absorb_rate::<168>(group, runs, rounds),
        _ => unreachable!("the FIPS 202 rates are 72, 104, 136, 144 and 168"),
    }
}

/// Two runs of bytes at a fixed stride, one per state.
#[derive(Clone, Copy)]
struct Runs<'a> {
    data: &'a [u8],
    stride: usize,
    len: usize,
}

/// [`absorb_blocks`] for one rate, so that the word loop has constant bounds.
#[target_feature(enable = "sha3")]
fn absorb_rate<const RATE: usize>(group: &mut Group2, runs: Runs<'_>, rounds: Rounds) {
    assert!(runs.len.is_multiple_of(RATE));
    let mut a = load(group);
    for start in (0..runs.len).step_by(RATE) {
        let first = &runs.data[start..start + RATE];
        let second = &runs.data[runs.stride + start..runs.stride + start + RATE];
        xor_block_words::<RATE>(&mut a, first, second);
        p1600_x2(&mut a, rounds);
    }
    store(group, &a);
}

/// XORs the words of two `RATE`-byte blocks into the state: lane w of
/// register w gets word w of each block.
#[inline]
#[target_feature(enable = "sha3")]
fn xor_block_words<const RATE: usize>(a: &mut StateX2, first: &[u8], second: &[u8]) {
    let words = RATE / 8;
    let mut w = 0;
    // Two words of each block: two loads and a 2 × 2 transpose.
    while w + 2 <= words {
        let (x, y) = (&first[8 * w..8 * w + 16], &second[8 * w..8 * w + 16]);
        // SAFETY: `x` and `y` are 16 readable bytes each (a byte load
        // needs no alignment).
        let (x, y) = unsafe {
            (
                vreinterpretq_u64_u8(vld1q_u8(x.as_ptr())),
                vreinterpretq_u64_u8(vld1q_u8(y.as_ptr())),
            )
        };
        a[w] = veorq_u64(a[w], vzip1q_u64(x, y));
        a[w + 1] = veorq_u64(a[w + 1], vzip2q_u64(x, y));
        w += 2;
    }
    // The rate's last word, where it has an odd number of them.
    if w < words {
        let word = |block: &[u8]| u64::from_le_bytes(block[8 * w..8 * w + 8].try_into().unwrap());
        let column = vcombine_u64(vcreate_u64(word(first)), vcreate_u64(word(second)));
        a[w] = veorq_u64(a[w], column);
    }
}

/// Two states in registers, lane-major.
type StateX2 = [uint64x2_t; 25];

#[inline]
#[target_feature(enable = "sha3")]
fn load(group: &Group2) -> StateX2 {
    // SAFETY: each column is two readable, aligned u64s.
    std::array::from_fn(|k| unsafe { vld1q_u64(group[k].as_ptr()) })
}

#[inline]
#[target_feature(enable = "sha3")]
fn store(group: &mut Group2, a: &StateX2) {
    for (column, lane) in group.iter_mut().zip(a) {
        // SAFETY: each column is two writable, aligned u64s.
        unsafe { vst1q_u64(column.as_mut_ptr(), *lane) };
    }
}

/// One output row of a round (lanes 5Y … 5Y + 4): the five source lanes
/// (`$s`, with rho offset `$r`, listed by destination X = 0 … 4 as in
/// `keccak.rs`'s `keccak_round!`) get theta's D and rho's rotation in one
/// XAR each (a right rotation by 64 − r), pi by where they are placed, then
/// chi in one BCAX each: x ^ (!y & z) = BCAX(x, z, y).
macro_rules! row {
    ($a:ident, $d:ident; $($s:tt $r:tt),*) => {{
        let b = [$(vxarq_u64::<{ (64 - $r) % 64 }>($a[$s], $d[$s % 5])),*];
        [
            vbcaxq_u64(b[0], b[2], b[1]),
            vbcaxq_u64(b[1], b[3], b[2]),
            vbcaxq_u64(b[2], b[4], b[3]),
            vbcaxq_u64(b[3], b[0], b[4]),
            vbcaxq_u64(b[4], b[1], b[0]),
        ]
    }};
}

/// Keccak-p[1600, `rounds`] on two states: two rounds per loop turn, from
/// one set of registers into another and back, so that no round copies its
/// output over its input (the round counts, 24 and 12, are even:
/// `keccak.rs` asserts it).
#[inline]
#[target_feature(enable = "sha3")]
fn p1600_x2(a: &mut StateX2, rounds: Rounds) {
    let mut round = rounds.first();
    while round + 1 < RC.len() {
        let e = round_x2(a, RC[round]);
        *a = round_x2(&e, RC[round + 1]);
        round += 2;
    }
}

/// One round of Keccak-p[1600] on two states, with round constant `rc`.
#[inline]
#[target_feature(enable = "sha3")]
fn round_x2(a: &StateX2, rc: u64) -> StateX2 {
    let c: [uint64x2_t; 5] = std::array::from_fn(|x| {
        veor3q_u64(veor3q_u64(a[x], a[x + 5], a[x + 10]), a[x + 15], a[x + 20])
    });
    // D[x] = C[x − 1] ^ (C[x + 1] <<< 1): one RAX1.
    let d = [
        vrax1q_u64(c[4], c[1]),
        vrax1q_u64(c[0], c[2]),
        vrax1q_u64(c[1], c[3]),
        vrax1q_u64(c[2], c[4]),
        vrax1q_u64(c[3], c[0]),
    ];
    let rows = [
        row!(a, d; 0 0, 6 44, 12 43, 18 21, 24 14),
        row!(a, d; 3 28, 9 20, 10 3, 16 45, 22 61),
        row!(a, d; 1 1, 7 6, 13 25, 19 8, 20 18),
        row!(a, d; 4 27, 5 36, 11 10, 17 15, 23 56),
        row!(a, d; 2 62, 8 55, 14 39, 15 41, 21 2),
    ];
    let mut e: StateX2 = std::array::from_fn(|k| rows[k / 5][k % 5]);
    e[0] = veorq_u64(e[0], vdupq_n_u64(rc));
    e
}

#[cfg(test)]
mod tests {
    use super::super::keccak::{absorb_runs_one_by_one, keccak_crate, test_state};
    use super::super::platform::sha3_for_test;
    use super::*;

    const NEEDS_SHA3: &str = "sha3_for_test fails where this test runs without SHA3";
    const RATES: [usize; 5] = [72, 104, 136, 144, 168];

    fn group_of(states: &[[u64; 25]; 2]) -> Group2 {
        std::array::from_fn(|k| std::array::from_fn(|i| states[i][k]))
    }

    fn assert_same(group: &Group2, states: &[[u64; 25]; 2], what: &str) {
        for (k, column) in group.iter().enumerate() {
            for (i, state) in states.iter().enumerate() {
                assert_eq!(column[i], state[k], "{what}, state {i}, lane {k}");
            }
        }
    }

    #[test]
    #[cfg_attr(
        not(treehash_test_sha3),
        ignore = "the CPU that built this test has no SHA3 (build.rs)"
    )]
    fn both_lanes_run_the_keccak_crates_12_and_24_rounds() {
        let sha3 =
            sha3_for_test("both_lanes_run_the_keccak_crates_12_and_24_rounds").expect(NEEDS_SHA3);
        for rounds in [Rounds::Keccak24, Rounds::Turbo12] {
            let mut states: [[u64; 25]; 2] = std::array::from_fn(|i| test_state(i as u64 + 31));
            let mut group = group_of(&states);
            for turn in 0..3 {
                permute(sha3, &mut group, rounds);
                states.iter_mut().for_each(|s| keccak_crate(s, rounds));
                assert_same(&group, &states, &format!("{rounds:?}, turn {turn}"));
            }
        }
    }

    #[test]
    #[cfg_attr(
        not(treehash_test_sha3),
        ignore = "the CPU that built this test has no SHA3 (build.rs)"
    )]
    fn runs_at_a_stride_absorb_like_scalar_sponges_at_12_and_24_rounds() {
        let sha3 = sha3_for_test("runs_at_a_stride_absorb_like_scalar_sponges_at_12_and_24_rounds")
            .expect(NEEDS_SHA3);
        for rounds in [Rounds::Keccak24, Rounds::Turbo12] {
            for rate in RATES {
                // Runs of one to three blocks back to back, and of two
                // blocks with a gap between them that is never read.
                let shapes = [(rate, rate), (2 * rate, 2 * rate), (3 * rate, 3 * rate)];
                for (len, stride) in shapes.into_iter().chain([(2 * rate, 2 * rate + 13)]) {
                    let data: Vec<u8> = (0..stride + len).map(|k| (k * 11 + rate) as u8).collect();
                    let mut states: [[u64; 25]; 2] =
                        std::array::from_fn(|i| test_state(i as u64 + 5));
                    let mut group = group_of(&states);
                    absorb_blocks(sha3, &mut group, &data, stride, len, rate, rounds);
                    absorb_runs_one_by_one(&mut states, &data, stride, len, rate, rounds);
                    let what = format!("{rounds:?}, rate {rate}, {len} bytes at {stride}");
                    assert_same(&group, &states, &what);
                }
            }
        }
    }
}
