//! Keccak-p[1600] on eight independent states at once with AVX-512: lane k
//! of the eight states sits in one 512-bit register, so one instruction
//! advances eight leaves. `vprolq` does the rotations and `vpternlogq` the
//! three-input steps of theta and chi. The eight states' data lie at a
//! fixed stride (the blocks of a stripe side by side, or whole chunks back
//! to back): eight 64-byte loads and an 8 × 8 transpose give eight words of
//! all eight blocks. A whole run of blocks is absorbed in one call, so the
//! states stay in registers from block to block.

use std::arch::x86_64::*;

use super::keccak::keccak_p1600;
use super::platform::{Avx512, LaneKernel, OneState};
use crate::sponge::{Rounds, SpongeSpec};

// The lane operations `keccak_p1600!` is written with, on AVX-512 registers.

macro_rules! xor {
    ($x:expr, $y:expr) => {
        _mm512_xor_si512($x, $y)
    };
}

/// Five-way XOR in two `vpternlogq` (0x96: x ^ y ^ z).
macro_rules! xor5 {
    ($a:expr, $b:expr, $c:expr, $d:expr, $e:expr) => {
        _mm512_ternarylogic_epi64::<0x96>(_mm512_ternarylogic_epi64::<0x96>($a, $b, $c), $d, $e)
    };
}

/// x ^ (!y & z) in one `vpternlogq` (0xD2).
macro_rules! chi {
    ($x:expr, $y:expr, $z:expr) => {
        _mm512_ternarylogic_epi64::<0xD2>($x, $y, $z)
    };
}

macro_rules! lane {
    ($v:expr) => {
        _mm512_set1_epi64($v as i64)
    };
}

/// Rotates each 64-bit lane left with `vprolq`.
macro_rules! rol {
    ($x:expr, $n:tt) => {
        _mm512_rol_epi64::<$n>($x)
    };
}

/// Eight leaves' states, lane-major: `[k][i]` is lane k of leaf i.
pub(super) type Group8 = [[u64; 8]; 25];

/// Leaf i of `group` absorbs `data[i·stride .. i·stride + len]` from
/// position 0 of the rate: `len` is a multiple of `rate` (whole blocks),
/// `data` holds the eight runs (`7·stride + len` bytes at least), and each
/// block is followed by Keccak-p[1600, `rounds`].
pub(super) fn absorb_blocks(
    avx512: Avx512,
    group: &mut Group8,
    data: &[u8],
    stride: usize,
    len: usize,
    rate: usize,
    rounds: Rounds,
) {
    let _ = avx512;
    // SAFETY: the token proves detection found AVX-512F.
    unsafe { absorb_blocks_avx512(group, data, stride, len, rate, rounds) }
}

/// Keccak-p[1600, `rounds`] on eight states.
pub(super) fn permute(avx512: Avx512, group: &mut Group8, rounds: Rounds) {
    let _ = avx512;
    // SAFETY: the token proves detection found AVX-512F.
    unsafe { permute_avx512(group, rounds) }
}

/// The kernel of 8 sponges per permutation, for the leaves, the parent
/// levels and the standard functions' chunks.
impl LaneKernel<8> for Avx512 {
    fn absorb_blocks(
        self,
        group: &mut Group8,
        data: &[u8],
        stride: usize,
        len: usize,
        spec: &SpongeSpec,
    ) {
        absorb_blocks(self, group, data, stride, len, spec.rate(), spec.rounds());
    }

    fn permute(self, group: &mut Group8, rounds: Rounds) {
        permute(self, group, rounds);
    }

    fn one_state(self) -> OneState {
        OneState::Avx512(self)
    }
}

#[target_feature(enable = "avx512f")]
fn permute_avx512(group: &mut Group8, rounds: Rounds) {
    let mut a = load(group);
    p1600_x8(&mut a, rounds);
    store(group, &a);
}

#[target_feature(enable = "avx512f")]
fn absorb_blocks_avx512(
    group: &mut Group8,
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

/// Eight runs of bytes at a fixed stride, one per state.
#[derive(Clone, Copy)]
struct Runs<'a> {
    data: &'a [u8],
    stride: usize,
    len: usize,
}

/// How far ahead within its run each state's block is prefetched: a few
/// blocks, the distance that gains most on runs read from memory
/// (docs/decisions/0022-lane-loads-and-prefetch.md). Runs of one block (the
/// trees' default B) prefetch nothing.
const PREFETCH_AHEAD: usize = 512;

/// [`absorb_blocks`] for one rate, so that the lane loop has a constant bound.
#[target_feature(enable = "avx512f")]
fn absorb_rate<const RATE: usize>(group: &mut Group8, runs: Runs<'_>, rounds: Rounds) {
    let Runs { data, stride, len } = runs;
    assert!(len.is_multiple_of(RATE));
    if len == 0 {
        return;
    }
    assert!(stride.checked_mul(7).and_then(|s| s.checked_add(len)) <= Some(data.len()));
    let mut a = load(group);
    for start in (0..len).step_by(RATE) {
        // Eight runs read at once outrun the hardware prefetchers: ask for
        // the lines of the block PREFETCH_AHEAD bytes on in each run.
        let ahead = start + PREFETCH_AHEAD;
        if ahead < len {
            for j in 0..8 {
                for line in (0..RATE).step_by(64) {
                    let at = data.as_ptr().wrapping_add(j * stride + ahead + line);
                    _mm_prefetch::<_MM_HINT_T0>(at.cast());
                }
            }
        }
        // SAFETY: start + RATE <= len (start < len, both multiples of RATE)
        // and 7·stride + len <= data.len(), asserted above.
        unsafe { xor_block::<RATE>(&mut a, runs, start) };
        // Expanded here rather than called, so that the states stay in
        // registers across blocks.
        keccak_p1600!(&mut a, rounds);
    }
    store(group, &a);
}

/// XORs the eight runs' block at `start` into the state, eight words at a
/// time: eight loads of up to 64 bytes (masked past the rate's last word,
/// so nothing beyond it is read) and an 8 × 8 transpose. A gather per word
/// loads the same, but slower
/// (docs/decisions/0022-lane-loads-and-prefetch.md).
///
/// # Safety
///
/// `start + RATE <= runs.len` and `7·runs.stride + runs.len <= runs.data.len()`.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn xor_block<const RATE: usize>(a: &mut StateX8, runs: Runs<'_>, start: usize) {
    let Runs { data, stride, .. } = runs;
    let words = RATE / 8;
    for w in (0..words).step_by(8) {
        let n = (words - w).min(8);
        let rows: [__m512i; 8] = std::array::from_fn(|j| {
            // SAFETY: the words read are data[j·stride + start + 8w ..
            // j·stride + start + 8(w + n)], and j·stride + start + 8(w + n)
            // <= 7·stride + start + RATE <= 7·stride + len <= data.len() (the
            // caller's contract): all inside `data`. A masked-off word is
            // never read (AVX-512 suppresses its faults).
            unsafe {
                let at = data.as_ptr().add(j * stride + start + 8 * w);
                if n == 8 {
                    _mm512_loadu_si512(at.cast())
                } else {
                    _mm512_maskz_loadu_epi64((1 << n) - 1, at.cast())
                }
            }
        });
        for (k, column) in transpose(rows).into_iter().take(n).enumerate() {
            a[w + k] = _mm512_xor_si512(a[w + k], column);
        }
    }
}

/// The 8 × 8 transpose of 64-bit words: `rows[j]` holds words 0 … 7 of run
/// j; column k of the result holds word k of runs 0 … 7.
#[inline]
#[target_feature(enable = "avx512f")]
fn transpose(rows: [__m512i; 8]) -> [__m512i; 8] {
    // Pairs of rows interleaved: words (0, 2, 4, 6) and (1, 3, 5, 7) of rows 2i, 2i + 1.
    let lo = |i: usize| _mm512_unpacklo_epi64(rows[2 * i], rows[2 * i + 1]);
    let hi = |i: usize| _mm512_unpackhi_epi64(rows[2 * i], rows[2 * i + 1]);
    let (l0, l1, l2, l3) = (lo(0), lo(1), lo(2), lo(3));
    let (h0, h1, h2, h3) = (hi(0), hi(1), hi(2), hi(3));
    // 128-bit lanes of two pairs: 0x88 takes lanes 0 and 2 of each, 0xDD lanes 1 and 3.
    let q = [
        _mm512_shuffle_i64x2::<0x88>(l0, l1), // words 0, 4 of rows 0-3
        _mm512_shuffle_i64x2::<0x88>(h0, h1), // words 1, 5
        _mm512_shuffle_i64x2::<0xDD>(l0, l1), // words 2, 6
        _mm512_shuffle_i64x2::<0xDD>(h0, h1), // words 3, 7
        _mm512_shuffle_i64x2::<0x88>(l2, l3), // the same of rows 4-7
        _mm512_shuffle_i64x2::<0x88>(h2, h3),
        _mm512_shuffle_i64x2::<0xDD>(l2, l3),
        _mm512_shuffle_i64x2::<0xDD>(h2, h3),
    ];
    [
        _mm512_shuffle_i64x2::<0x88>(q[0], q[4]),
        _mm512_shuffle_i64x2::<0x88>(q[1], q[5]),
        _mm512_shuffle_i64x2::<0x88>(q[2], q[6]),
        _mm512_shuffle_i64x2::<0x88>(q[3], q[7]),
        _mm512_shuffle_i64x2::<0xDD>(q[0], q[4]),
        _mm512_shuffle_i64x2::<0xDD>(q[1], q[5]),
        _mm512_shuffle_i64x2::<0xDD>(q[2], q[6]),
        _mm512_shuffle_i64x2::<0xDD>(q[3], q[7]),
    ]
}

/// Eight states in registers, lane-major.
type StateX8 = [__m512i; 25];

#[inline]
#[target_feature(enable = "avx512f")]
fn load(group: &Group8) -> StateX8 {
    let mut a = [_mm512_setzero_si512(); 25];
    for (lane, column) in a.iter_mut().zip(group.iter()) {
        // SAFETY: `column` is 8 × 8 readable bytes (an unaligned load is allowed).
        *lane = unsafe { _mm512_loadu_si512(column.as_ptr().cast()) };
    }
    a
}

#[inline]
#[target_feature(enable = "avx512f")]
fn store(group: &mut Group8, a: &StateX8) {
    for (column, lane) in group.iter_mut().zip(a) {
        // SAFETY: `column` is 8 × 8 writable bytes.
        unsafe { _mm512_storeu_si512(column.as_mut_ptr().cast(), *lane) };
    }
}

/// Keccak-p[1600, `rounds`] on eight states.
#[inline]
#[target_feature(enable = "avx512f")]
fn p1600_x8(a: &mut StateX8, rounds: Rounds) {
    keccak_p1600!(a, rounds);
}

#[cfg(test)]
mod tests {
    use super::super::keccak::{absorb_runs_one_by_one, keccak_crate, p1600, test_state};
    use super::super::platform::avx512_for_test;
    use super::*;

    const NEEDS_AVX512: &str = "avx512_for_test fails where this test runs without AVX-512F";

    #[test]
    #[cfg_attr(
        not(treehash_test_avx512),
        ignore = "the CPU that built this test has no AVX-512F (build.rs)"
    )]
    fn eight_lanes_match_the_scalar_permutation() {
        let avx512 =
            avx512_for_test("eight_lanes_match_the_scalar_permutation").expect(NEEDS_AVX512);
        let mut scalar: [[u64; 25]; 8] = std::array::from_fn(|i| test_state(i as u64 + 1));
        let mut group: Group8 = std::array::from_fn(|k| std::array::from_fn(|i| scalar[i][k]));
        for _ in 0..3 {
            permute(avx512, &mut group, Rounds::Keccak24);
            scalar.iter_mut().for_each(|s| p1600(s, Rounds::Keccak24));
            for (k, column) in group.iter().enumerate() {
                for i in 0..8 {
                    assert_eq!(column[i], scalar[i][k], "state {i}, lane {k}");
                }
            }
        }
    }

    #[test]
    #[cfg_attr(
        not(treehash_test_avx512),
        ignore = "the CPU that built this test has no AVX-512F (build.rs)"
    )]
    fn eight_blocks_absorb_like_eight_scalar_sponges() {
        let avx512 =
            avx512_for_test("eight_blocks_absorb_like_eight_scalar_sponges").expect(NEEDS_AVX512);
        for rate in [72, 104, 136, 144, 168] {
            for b in [rate, 2 * rate, 3 * rate] {
                let blocks: Vec<u8> = (0..8 * b).map(|k| (k * 7 + rate) as u8).collect();
                let mut scalar: [[u64; 25]; 8] = std::array::from_fn(|i| test_state(i as u64 + 9));
                let mut group: Group8 =
                    std::array::from_fn(|k| std::array::from_fn(|i| scalar[i][k]));
                absorb_blocks(avx512, &mut group, &blocks, b, b, rate, Rounds::Keccak24);
                for (i, state) in scalar.iter_mut().enumerate() {
                    for chunk in blocks[i * b..(i + 1) * b].chunks(rate) {
                        for (lane, word) in state.iter_mut().zip(chunk.chunks(8)) {
                            *lane ^= u64::from_le_bytes(word.try_into().unwrap());
                        }
                        p1600(state, Rounds::Keccak24);
                    }
                }
                for (k, column) in group.iter().enumerate() {
                    for i in 0..8 {
                        assert_eq!(column[i], scalar[i][k], "rate {rate}, B {b}, leaf {i}");
                    }
                }
            }
        }
    }

    #[test]
    #[cfg_attr(
        not(treehash_test_avx512),
        ignore = "the CPU that built this test has no AVX-512F (build.rs)"
    )]
    fn every_lane_runs_the_keccak_crates_12_and_24_rounds() {
        let avx512 = avx512_for_test("every_lane_runs_the_keccak_crates_12_and_24_rounds")
            .expect(NEEDS_AVX512);
        for rounds in [Rounds::Keccak24, Rounds::Turbo12] {
            let mut scalar: [[u64; 25]; 8] = std::array::from_fn(|i| test_state(i as u64 + 31));
            let mut group: Group8 = std::array::from_fn(|k| std::array::from_fn(|i| scalar[i][k]));
            for _ in 0..3 {
                permute(avx512, &mut group, rounds);
                for state in &mut scalar {
                    keccak_crate(state, rounds);
                }
                for (k, column) in group.iter().enumerate() {
                    for (i, state) in scalar.iter().enumerate() {
                        assert_eq!(column[i], state[k], "{rounds:?}, state {i}, lane {k}");
                    }
                }
            }
        }
    }

    #[test]
    #[cfg_attr(
        not(treehash_test_avx512),
        ignore = "the CPU that built this test has no AVX-512F (build.rs)"
    )]
    fn runs_at_a_stride_absorb_like_scalar_sponges_at_12_and_24_rounds() {
        let avx512 =
            avx512_for_test("runs_at_a_stride_absorb_like_scalar_sponges_at_12_and_24_rounds")
                .expect(NEEDS_AVX512);
        for rounds in [Rounds::Keccak24, Rounds::Turbo12] {
            for rate in [72, 104, 136, 144, 168] {
                // Runs of two blocks, with the gap between them never read.
                let (len, stride) = (2 * rate, 2 * rate + 13);
                let data: Vec<u8> = (0..7 * stride + len)
                    .map(|k| (k * 11 + rate) as u8)
                    .collect();
                let mut scalar: [[u64; 25]; 8] = std::array::from_fn(|i| test_state(i as u64 + 5));
                let mut group: Group8 =
                    std::array::from_fn(|k| std::array::from_fn(|i| scalar[i][k]));
                absorb_blocks(avx512, &mut group, &data, stride, len, rate, rounds);
                absorb_runs_one_by_one(&mut scalar, &data, stride, len, rate, rounds);
                for (k, column) in group.iter().enumerate() {
                    for (i, state) in scalar.iter().enumerate() {
                        assert_eq!(column[i], state[k], "{rounds:?}, rate {rate}, leaf {i}");
                    }
                }
            }
        }
    }
}
