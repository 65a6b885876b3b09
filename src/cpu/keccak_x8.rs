//! Keccak-f[1600] on eight independent states at once with AVX-512: lane k
//! of the eight states sits in one 512-bit register, so one instruction
//! advances eight leaves. `vprolq` does the rotations and `vpternlogq` the
//! three-input steps of theta and chi. Within a stripe the eight blocks lie
//! side by side, so one gather per lane loads the same word of all eight.

use std::arch::x86_64::*;

use super::keccak::keccak_f1600;
use super::platform::Avx512;

/// Eight leaves' states, lane-major: `[k][i]` is lane k of leaf i.
pub type Group8 = [[u64; 8]; 25];

/// Eight whole blocks (`blocks` holds them back to back, `b` bytes each, `b`
/// a multiple of `rate`), absorbed by the eight leaves of `group` from
/// position 0 of the rate.
pub fn absorb_blocks(avx512: Avx512, group: &mut Group8, blocks: &[u8], b: usize, rate: usize) {
    let _ = avx512;
    // SAFETY: the token proves detection found AVX-512F.
    unsafe { absorb_blocks_avx512(group, blocks, b, rate) }
}

/// The permutation on eight states.
pub fn permute(avx512: Avx512, group: &mut Group8) {
    let _ = avx512;
    // SAFETY: the token proves detection found AVX-512F.
    unsafe { permute_avx512(group) }
}

#[target_feature(enable = "avx512f")]
fn permute_avx512(group: &mut Group8) {
    let mut a = load(group);
    f1600_x8(&mut a);
    store(group, &a);
}

#[target_feature(enable = "avx512f")]
fn absorb_blocks_avx512(group: &mut Group8, blocks: &[u8], b: usize, rate: usize) {
    match rate {
        72 => absorb_rate::<72>(group, blocks, b),
        104 => absorb_rate::<104>(group, blocks, b),
        136 => absorb_rate::<136>(group, blocks, b),
        144 => absorb_rate::<144>(group, blocks, b),
        168 => absorb_rate::<168>(group, blocks, b),
        _ => unreachable!("the FIPS 202 rates are 72, 104, 136, 144 and 168"),
    }
}

/// [`absorb_blocks`] for one rate, so that the lane loop has a constant bound.
#[target_feature(enable = "avx512f")]
fn absorb_rate<const RATE: usize>(group: &mut Group8, blocks: &[u8], b: usize) {
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
    let mut a = load(group);
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
    store(group, &a);
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

// The lane operations `keccak_f1600!` is written with, on AVX-512 registers.

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

/// The permutation, 24 rounds, on eight states.
#[inline]
#[target_feature(enable = "avx512f")]
fn f1600_x8(a: &mut StateX8) {
    keccak_f1600!(a);
}

#[cfg(test)]
mod tests {
    use super::super::keccak::{f1600, test_state};
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
            permute(avx512, &mut group);
            scalar.iter_mut().for_each(f1600);
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
                absorb_blocks(avx512, &mut group, &blocks, b, rate);
                for (i, state) in scalar.iter_mut().enumerate() {
                    for chunk in blocks[i * b..(i + 1) * b].chunks(rate) {
                        for (lane, word) in state.iter_mut().zip(chunk.chunks(8)) {
                            *lane ^= u64::from_le_bytes(word.try_into().unwrap());
                        }
                        f1600(state);
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
}
