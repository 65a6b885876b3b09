//! Keccak-f[1600] on four independent states at once with AVX2: lane k of
//! the four states sits in one 256-bit register, so one instruction advances
//! four leaves. AVX2 has no rotate: a rotation is two shifts and an OR, or one
//! byte shuffle for the rotations by 8 and 56; chi uses `vpandn`.
//!
//! Blocks are loaded with plain 32-byte loads (four words of one block) and
//! transposed in registers, four words of four blocks at a time, rather than
//! gathered (AVX2 gathers are slow, on AMD especially).

use std::arch::x86_64::*;

use super::keccak::keccak_p1600;
use super::platform::{Avx2, LaneKernel, OneState};
use crate::sponge::{Rounds, SpongeSpec};

/// Four leaves' states, lane-major: `[k][i]` is lane k of leaf i.
pub(super) type Group4 = [[u64; 4]; 25];

/// Leaf i of `group` absorbs `data[i·stride .. i·stride + len]` from
/// position 0 of the rate: `len` is a multiple of `rate` (whole blocks),
/// `data` holds the four runs (`3·stride + len` bytes at least), and each
/// block is followed by Keccak-p[1600, `rounds`].
pub(super) fn absorb_blocks(
    avx2: Avx2,
    group: &mut Group4,
    data: &[u8],
    stride: usize,
    len: usize,
    rate: usize,
    rounds: Rounds,
) {
    let _ = avx2;
    // SAFETY: the token proves detection found AVX2.
    unsafe { absorb_blocks_avx2(group, data, stride, len, rate, rounds) }
}

/// Keccak-p[1600, `rounds`] on four states.
pub(super) fn permute(avx2: Avx2, group: &mut Group4, rounds: Rounds) {
    let _ = avx2;
    // SAFETY: the token proves detection found AVX2.
    unsafe { permute_avx2(group, rounds) }
}

/// The kernel of 4 sponges per permutation, for the leaves, the parent
/// levels and the standard functions' chunks.
impl LaneKernel<4> for Avx2 {
    fn absorb_blocks(
        self,
        group: &mut Group4,
        data: &[u8],
        stride: usize,
        len: usize,
        spec: &SpongeSpec,
    ) {
        absorb_blocks(self, group, data, stride, len, spec.rate(), spec.rounds());
    }

    fn permute(self, group: &mut Group4, rounds: Rounds) {
        permute(self, group, rounds);
    }

    fn one_state(self) -> OneState {
        OneState::Portable
    }
}

#[target_feature(enable = "avx2")]
fn permute_avx2(group: &mut Group4, rounds: Rounds) {
    let mut a = load(group);
    p1600_x4(&mut a, rounds);
    store(group, &a);
}

#[target_feature(enable = "avx2")]
fn absorb_blocks_avx2(
    group: &mut Group4,
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

/// Four runs of bytes at a fixed stride, one per state.
#[derive(Clone, Copy)]
struct Runs<'a> {
    data: &'a [u8],
    stride: usize,
    len: usize,
}

/// [`absorb_blocks`] for one rate, so that the word loop has constant bounds.
#[target_feature(enable = "avx2")]
fn absorb_rate<const RATE: usize>(group: &mut Group4, runs: Runs<'_>, rounds: Rounds) {
    assert!(runs.len.is_multiple_of(RATE));
    let mut a = load(group);
    for start in (0..runs.len).step_by(RATE) {
        xor_block_words::<RATE>(&mut a, runs, start);
        p1600_x4(&mut a, rounds);
    }
    store(group, &a);
}

/// XORs words `start/8 .. (start + RATE)/8` of the four runs into the
/// state: lane w of register w gets word w of each run's block.
#[inline]
#[target_feature(enable = "avx2")]
fn xor_block_words<const RATE: usize>(a: &mut StateX4, runs: Runs<'_>, start: usize) {
    let Runs { data, stride, .. } = runs;
    let words = RATE / 8;
    let mut w = 0;
    // Four words of four blocks: four loads and a 4 × 4 transpose.
    while w + 4 <= words {
        let mut rows = [_mm256_setzero_si256(); 4];
        for (j, row) in rows.iter_mut().enumerate() {
            let at = j * stride + start + 8 * w;
            let bytes: &[u8; 32] = data[at..at + 32].try_into().unwrap();
            // SAFETY: `bytes` is 32 readable bytes (an unaligned load is allowed).
            *row = unsafe { _mm256_loadu_si256(bytes.as_ptr().cast()) };
        }
        // rows[j] = words w..w+4 of block j; after this, column w + i of all four.
        let lo01 = _mm256_unpacklo_epi64(rows[0], rows[1]); // w+0 and w+2 of blocks 0, 1
        let hi01 = _mm256_unpackhi_epi64(rows[0], rows[1]); // w+1 and w+3 of blocks 0, 1
        let lo23 = _mm256_unpacklo_epi64(rows[2], rows[3]);
        let hi23 = _mm256_unpackhi_epi64(rows[2], rows[3]);
        let columns = [
            _mm256_permute2x128_si256::<0x20>(lo01, lo23),
            _mm256_permute2x128_si256::<0x20>(hi01, hi23),
            _mm256_permute2x128_si256::<0x31>(lo01, lo23),
            _mm256_permute2x128_si256::<0x31>(hi01, hi23),
        ];
        for (i, column) in columns.into_iter().enumerate() {
            a[w + i] = _mm256_xor_si256(a[w + i], column);
        }
        w += 4;
    }
    // The last one to three words of the rate, one word of each block at a time.
    while w < words {
        let word = |j: usize| {
            let at = j * stride + start + 8 * w;
            u64::from_le_bytes(data[at..at + 8].try_into().unwrap()) as i64
        };
        let column = _mm256_set_epi64x(word(3), word(2), word(1), word(0));
        a[w] = _mm256_xor_si256(a[w], column);
        w += 1;
    }
}

/// Four states in registers, lane-major.
type StateX4 = [__m256i; 25];

#[inline]
#[target_feature(enable = "avx2")]
fn load(group: &Group4) -> StateX4 {
    let mut a = [_mm256_setzero_si256(); 25];
    for (lane, column) in a.iter_mut().zip(group.iter()) {
        // SAFETY: `column` is 4 × 8 readable bytes (an unaligned load is allowed).
        *lane = unsafe { _mm256_loadu_si256(column.as_ptr().cast()) };
    }
    a
}

#[inline]
#[target_feature(enable = "avx2")]
fn store(group: &mut Group4, a: &StateX4) {
    for (column, lane) in group.iter_mut().zip(a) {
        // SAFETY: `column` is 4 × 8 writable bytes.
        unsafe { _mm256_storeu_si256(column.as_mut_ptr().cast(), *lane) };
    }
}

// The lane operations `keccak_p1600!` is written with, on AVX2 registers.

macro_rules! xor {
    ($x:expr, $y:expr) => {
        _mm256_xor_si256($x, $y)
    };
}

macro_rules! xor5 {
    ($a:expr, $b:expr, $c:expr, $d:expr, $e:expr) => {
        xor!(xor!(xor!($a, $b), xor!($c, $d)), $e)
    };
}

/// x ^ (!y & z), with `vpandn`.
macro_rules! chi {
    ($x:expr, $y:expr, $z:expr) => {
        _mm256_xor_si256($x, _mm256_andnot_si256($y, $z))
    };
}

macro_rules! lane {
    ($v:expr) => {
        _mm256_set1_epi64x($v as i64)
    };
}

/// Rotates each 64-bit lane of `$x` left by the literal `$n`: a byte shuffle
/// for 8 and 56, two shifts and an OR otherwise.
macro_rules! rol {
    ($x:expr, 0) => {
        $x
    };
    ($x:expr, 8) => {
        _mm256_shuffle_epi8(
            $x,
            _mm256_set_epi64x(
                0x0e0d0c0b0a09080f,
                0x0605040302010007,
                0x0e0d0c0b0a09080f,
                0x0605040302010007,
            ),
        )
    };
    ($x:expr, 56) => {
        _mm256_shuffle_epi8(
            $x,
            _mm256_set_epi64x(
                0x080f0e0d0c0b0a09,
                0x0007060504030201,
                0x080f0e0d0c0b0a09,
                0x0007060504030201,
            ),
        )
    };
    ($x:expr, $n:tt) => {{
        let x = $x;
        _mm256_or_si256(
            _mm256_slli_epi64::<$n>(x),
            _mm256_srli_epi64::<{ 64 - $n }>(x),
        )
    }};
}

/// Keccak-p[1600, `rounds`] on four states.
#[inline]
#[target_feature(enable = "avx2")]
fn p1600_x4(a: &mut StateX4, rounds: Rounds) {
    keccak_p1600!(a, rounds);
}

#[cfg(test)]
mod tests {
    use super::super::keccak::{absorb_runs_one_by_one, keccak_crate, p1600, test_state};
    use super::super::platform::avx2_for_test;
    use super::*;

    const NEEDS_AVX2: &str = "avx2_for_test fails where this test runs without AVX2";

    /// The rates the tests absorb at: under Miri (scripts/ci-miri.sh, built
    /// with AVX2 on), where a permutation takes a good part of a second,
    /// the smallest and the largest only.
    const RATES: &[usize] = if cfg!(miri) {
        &[72, 168]
    } else {
        &[72, 104, 136, 144, 168]
    };

    #[test]
    #[cfg_attr(
        not(treehash_test_avx2),
        ignore = "the CPU that built this test has no AVX2 (build.rs)"
    )]
    fn four_lanes_match_the_scalar_permutation() {
        let avx2 = avx2_for_test("four_lanes_match_the_scalar_permutation").expect(NEEDS_AVX2);
        let mut scalar: [[u64; 25]; 4] = std::array::from_fn(|i| test_state(i as u64 + 1));
        let mut group: Group4 = std::array::from_fn(|k| std::array::from_fn(|i| scalar[i][k]));
        for _ in 0..3 {
            permute(avx2, &mut group, Rounds::Keccak24);
            scalar.iter_mut().for_each(|s| p1600(s, Rounds::Keccak24));
            for (k, column) in group.iter().enumerate() {
                for i in 0..4 {
                    assert_eq!(column[i], scalar[i][k], "state {i}, lane {k}");
                }
            }
        }
    }

    #[test]
    #[cfg_attr(
        not(treehash_test_avx2),
        ignore = "the CPU that built this test has no AVX2 (build.rs)"
    )]
    fn four_blocks_absorb_like_four_scalar_sponges() {
        let avx2 = avx2_for_test("four_blocks_absorb_like_four_scalar_sponges").expect(NEEDS_AVX2);
        for &rate in RATES {
            let blocks_per_lane: &[usize] = if cfg!(miri) { &[2] } else { &[1, 2, 3] };
            for b in blocks_per_lane.iter().map(|n| n * rate) {
                let blocks: Vec<u8> = (0..4 * b).map(|k| (k * 7 + rate) as u8).collect();
                let mut scalar: [[u64; 25]; 4] = std::array::from_fn(|i| test_state(i as u64 + 9));
                let mut group: Group4 =
                    std::array::from_fn(|k| std::array::from_fn(|i| scalar[i][k]));
                absorb_blocks(avx2, &mut group, &blocks, b, b, rate, Rounds::Keccak24);
                for (i, state) in scalar.iter_mut().enumerate() {
                    for chunk in blocks[i * b..(i + 1) * b].chunks(rate) {
                        for (lane, word) in state.iter_mut().zip(chunk.chunks(8)) {
                            *lane ^= u64::from_le_bytes(word.try_into().unwrap());
                        }
                        p1600(state, Rounds::Keccak24);
                    }
                }
                for (k, column) in group.iter().enumerate() {
                    for i in 0..4 {
                        assert_eq!(column[i], scalar[i][k], "rate {rate}, B {b}, leaf {i}");
                    }
                }
            }
        }
    }

    #[test]
    #[cfg_attr(
        not(treehash_test_avx2),
        ignore = "the CPU that built this test has no AVX2 (build.rs)"
    )]
    fn every_lane_runs_the_keccak_crates_12_and_24_rounds() {
        let avx2 = avx2_for_test("every_lane_runs_the_keccak_crates_12_and_24_rounds")
            .expect("the build tests AVX2 only where the CPU has it");
        for rounds in [Rounds::Keccak24, Rounds::Turbo12] {
            let mut scalar: [[u64; 25]; 4] = std::array::from_fn(|i| test_state(i as u64 + 31));
            let mut group: Group4 = std::array::from_fn(|k| std::array::from_fn(|i| scalar[i][k]));
            for _ in 0..3 {
                permute(avx2, &mut group, rounds);
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
        not(treehash_test_avx2),
        ignore = "the CPU that built this test has no AVX2 (build.rs)"
    )]
    fn runs_at_a_stride_absorb_like_scalar_sponges_at_12_and_24_rounds() {
        let avx2 = avx2_for_test("runs_at_a_stride_absorb_like_scalar_sponges_at_12_and_24_rounds")
            .expect("the build tests AVX2 only where the CPU has it");
        for rounds in [Rounds::Keccak24, Rounds::Turbo12] {
            for &rate in RATES {
                // Runs of two blocks, with the gap between them never read.
                let (len, stride) = (2 * rate, 2 * rate + 13);
                let data: Vec<u8> = (0..3 * stride + len)
                    .map(|k| (k * 11 + rate) as u8)
                    .collect();
                let mut scalar: [[u64; 25]; 4] = std::array::from_fn(|i| test_state(i as u64 + 5));
                let mut group: Group4 =
                    std::array::from_fn(|k| std::array::from_fn(|i| scalar[i][k]));
                absorb_blocks(avx2, &mut group, &data, stride, len, rate, rounds);
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
