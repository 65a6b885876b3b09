//! Keccak-p[1600, 12 or 24] on one state in AVX-512 registers, after
//! XKCP's plain one-state `KeccakP-1600-AVX512.c` (Ronny Van Keer, after
//! Vladimir Sedach; CC0): the state is five 512-bit registers, one row
//! (plane y, lanes x = 0 … 4 in words 0 … 4) each. Theta's column parities
//! are one five-way XOR of the rows (two `vpternlogq`) and two `vpermq`;
//! rho is one `vprolvq` per row; pi is a `vpermq` per row then a transpose
//! of the rows (`vpunpck[lh]qdq`, `vpermt2q`); chi is one `vpternlogq` per
//! row. A run of whole blocks is absorbed in one call, so the state stays
//! in registers from block to block: the sponge of one state that the
//! final nodes of KT and ParallelHash and TurboSHAKE's whole message go
//! through (`crate::standard::sponge`).
//!
//! Words 5 … 7 of each register carry values that never reach words
//! 0 … 4 (the transpose moves them about); only words 0 … 4 are stored.

use std::arch::x86_64::*;

use super::platform::Avx512;

/// The rounds of Keccak-f\[1600\] whose iota constants are
/// `round_constants` (its last n_r, `&RC[rounds.first()..]` of `keccak.rs`,
/// which passes them: this module takes nothing from there) on `state`
/// (lane x + 5y at index x + 5y): Keccak-p[1600, n_r].
pub(super) fn permute(avx512: Avx512, state: &mut [u64; 25], round_constants: &[u64]) {
    let _ = avx512;
    // SAFETY: the token proves detection found AVX-512F, all that the
    // function's instructions need.
    unsafe { permute_avx512(state, round_constants) }
}

/// XORs each whole `rate`-byte block of `data` into `state` from position
/// 0 and permutes after each (the rounds of `round_constants`, as for
/// [`permute`]): the count of bytes left over at the end (fewer than
/// `rate`). `rate` is a multiple of 8 from 8 to 200.
pub(super) fn absorb_blocks(
    avx512: Avx512,
    state: &mut [u64; 25],
    data: &[u8],
    rate: usize,
    round_constants: &[u64],
) -> usize {
    assert!(
        rate.is_multiple_of(8) && (8..=200).contains(&rate),
        "a rate of whole lanes"
    );
    let _ = avx512;
    // SAFETY: the token proves detection found AVX-512F, all that the
    // function's instructions need.
    unsafe { absorb_blocks_avx512(state, data, rate, round_constants) }
}

/// The five rows of a state: `[y]` holds lanes 5y … 5y + 4 in words 0 … 4.
type Rows = [__m512i; 5];

/// The words of a row that belong to the state.
const ROW: __mmask8 = 0x1F;

#[target_feature(enable = "avx512f")]
fn permute_avx512(state: &mut [u64; 25], round_constants: &[u64]) {
    let mut rows = load(state);
    rounds_of(&mut rows, round_constants);
    store(state, &rows);
}

#[target_feature(enable = "avx512f")]
fn absorb_blocks_avx512(
    state: &mut [u64; 25],
    data: &[u8],
    rate: usize,
    round_constants: &[u64],
) -> usize {
    let lanes = rate / 8;
    // Which words of each row a block covers.
    let masks: [__mmask8; 5] = std::array::from_fn(|y| {
        let words = lanes.saturating_sub(5 * y).min(5);
        ((1u16 << words) - 1) as __mmask8
    });
    let mut rows = load(state);
    let mut blocks = data.chunks_exact(rate);
    for block in &mut blocks {
        for (y, row) in rows.iter_mut().enumerate().take(lanes.div_ceil(5)) {
            // SAFETY: row y < ⌈lanes / 5⌉ starts at byte 40y < 8 · lanes =
            // `rate`, within the block; the words its mask loads (lanes
            // 5y … 5y + 4 below `lanes`) lie within the block's `rate`
            // bytes, and masked-off words are neither read nor faulted on.
            let words =
                unsafe { _mm512_maskz_loadu_epi64(masks[y], block.as_ptr().add(40 * y).cast()) };
            *row = _mm512_xor_si512(*row, words);
        }
        rounds_of(&mut rows, round_constants);
    }
    store(state, &rows);
    blocks.remainder().len()
}

/// The rows of `state`: rows 0 … 3 by whole 64-byte loads, which bring
/// the next row's first lanes into words 5 … 7 (a round computes words
/// 0 … 4 from words 0 … 4 only), row 4 by a masked load that stops at the
/// state's end.
#[inline]
#[target_feature(enable = "avx512f")]
fn load(state: &[u64; 25]) -> Rows {
    // SAFETY: row y < 4 reads lanes 5y … 5y + 7, within the 25 (at most
    // 15 + 7 = 22); row 4 reads lanes 20 … 24 only, the mask keeping the
    // rest neither read nor faulted on.
    std::array::from_fn(|y| unsafe {
        let row = state.as_ptr().add(5 * y);
        if y < 4 {
            _mm512_loadu_si512(row.cast())
        } else {
            _mm512_maskz_loadu_epi64(ROW, row.cast())
        }
    })
}

/// Writes `rows` back to `state`.
#[inline]
#[target_feature(enable = "avx512f")]
fn store(state: &mut [u64; 25], rows: &Rows) {
    for (y, row) in rows.iter().enumerate() {
        // SAFETY: row y writes lanes 5y … 5y + 4 of the 25.
        unsafe { _mm512_mask_storeu_epi64(state.as_mut_ptr().add(5 * y).cast(), ROW, *row) };
    }
}

/// The rounds of `round_constants` on `rows`.
#[inline]
#[target_feature(enable = "avx512f")]
fn rounds_of(rows: &mut Rows, round_constants: &[u64]) {
    let k = Constants::new();
    let [mut b, mut g, mut kk, mut m, mut s] = *rows;
    for rc in round_constants {
        // Theta: C[x - 1] ^ rol(C[x + 1], 1) into every row.
        let c = xor3(xor3(b, g, kk), m, s);
        let prev = _mm512_permutexvar_epi64(k.theta_prev, c);
        let next = _mm512_rol_epi64::<1>(_mm512_permutexvar_epi64(k.theta_next, c));
        // Rho.
        b = _mm512_rolv_epi64(xor3(b, next, prev), k.rho[0]);
        g = _mm512_rolv_epi64(xor3(g, next, prev), k.rho[1]);
        kk = _mm512_rolv_epi64(xor3(kk, next, prev), k.rho[2]);
        m = _mm512_rolv_epi64(xor3(m, next, prev), k.rho[3]);
        s = _mm512_rolv_epi64(xor3(s, next, prev), k.rho[4]);
        // Pi, first half: each row's lanes in their output order.
        let b0 = _mm512_permutexvar_epi64(k.pi1[0], b);
        let b1 = _mm512_permutexvar_epi64(k.pi1[1], g);
        let b2 = _mm512_permutexvar_epi64(k.pi1[2], kk);
        let b3 = _mm512_permutexvar_epi64(k.pi1[3], m);
        let b4 = _mm512_permutexvar_epi64(k.pi1[4], s);
        // Chi, and iota on lane 0.
        b = _mm512_xor_si512(chi(b0, b1, b2), _mm512_maskz_set1_epi64(1, *rc as i64));
        g = chi(b1, b2, b3);
        kk = chi(b2, b3, b4);
        m = chi(b3, b4, b0);
        s = chi(b4, b0, b1);
        // Pi, second half: the rows transposed.
        let t0 = _mm512_unpacklo_epi64(b, g);
        let t1 = _mm512_unpacklo_epi64(kk, m);
        let t0 = _mm512_permutex2var_epi64(t0, k.pi2_s1, s);
        let t2 = _mm512_unpackhi_epi64(b, g);
        let t3 = _mm512_unpackhi_epi64(kk, m);
        let t2 = _mm512_permutex2var_epi64(t2, k.pi2_s2, s);
        b = _mm512_permutex2var_epi64(t0, k.pi2_bg, t1);
        g = _mm512_permutex2var_epi64(t2, k.pi2_bg, t3);
        kk = _mm512_permutex2var_epi64(t0, k.pi2_km, t1);
        m = _mm512_permutex2var_epi64(t2, k.pi2_km, t3);
        let t0 = _mm512_permutex2var_epi64(t0, k.pi2_s3, t1);
        s = _mm512_mask_blend_epi64(0x10, t0, s);
    }
    *rows = [b, g, kk, m, s];
}

/// x ^ y ^ z in one `vpternlogq`.
#[inline]
#[target_feature(enable = "avx512f")]
fn xor3(x: __m512i, y: __m512i, z: __m512i) -> __m512i {
    _mm512_ternarylogic_epi64::<0x96>(x, y, z)
}

/// x ^ (!y & z) in one `vpternlogq`.
#[inline]
#[target_feature(enable = "avx512f")]
fn chi(x: __m512i, y: __m512i, z: __m512i) -> __m512i {
    _mm512_ternarylogic_epi64::<0xD2>(x, y, z)
}

/// The index and rotation vectors of a round (XKCP's names).
struct Constants {
    theta_prev: __m512i,
    theta_next: __m512i,
    rho: [__m512i; 5],
    pi1: [__m512i; 5],
    pi2_s1: __m512i,
    pi2_s2: __m512i,
    pi2_bg: __m512i,
    pi2_km: __m512i,
    pi2_s3: __m512i,
}

impl Constants {
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn new() -> Constants {
        let v = |w: [i64; 8]| _mm512_setr_epi64(w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]);
        Constants {
            theta_prev: v([4, 0, 1, 2, 3, 5, 6, 7]),
            theta_next: v([1, 2, 3, 4, 0, 5, 6, 7]),
            rho: [
                v([0, 1, 62, 28, 27, 0, 0, 0]),
                v([36, 44, 6, 55, 20, 0, 0, 0]),
                v([3, 10, 43, 25, 39, 0, 0, 0]),
                v([41, 45, 15, 21, 8, 0, 0, 0]),
                v([18, 2, 61, 56, 14, 0, 0, 0]),
            ],
            pi1: [
                v([0, 3, 1, 4, 2, 5, 6, 7]),
                v([1, 4, 2, 0, 3, 5, 6, 7]),
                v([2, 0, 3, 1, 4, 5, 6, 7]),
                v([3, 1, 4, 2, 0, 5, 6, 7]),
                v([4, 2, 0, 3, 1, 5, 6, 7]),
            ],
            pi2_s1: v([0, 1, 2, 3, 4, 5, 8, 10]),
            pi2_s2: v([0, 1, 2, 3, 4, 5, 9, 11]),
            pi2_bg: v([0, 1, 8, 9, 6, 5, 6, 7]),
            pi2_km: v([2, 3, 10, 11, 7, 5, 6, 7]),
            pi2_s3: v([4, 5, 12, 13, 4, 5, 6, 7]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::keccak::{RC, absorb_runs_one_by_one, keccak_crate, test_state};
    use super::super::platform::avx512_for_test;
    use super::*;
    use crate::sponge::Rounds;
    use treehash_reference::keccak::keccak_p;

    const NEEDS_AVX512: &str = "avx512_for_test fails where this test runs without AVX-512F";

    #[test]
    #[cfg_attr(
        not(treehash_test_avx512),
        ignore = "the CPU that built this test has no AVX-512F (build.rs)"
    )]
    fn one_state_matches_the_keccak_crate_and_the_reference_at_12_and_24_rounds() {
        let avx512 = avx512_for_test(
            "one_state_matches_the_keccak_crate_and_the_reference_at_12_and_24_rounds",
        )
        .expect(NEEDS_AVX512);
        for rounds in [Rounds::Turbo12, Rounds::Keccak24] {
            for seed in 1..=5000 {
                let start = test_state(seed);
                let (mut ours, mut theirs) = (start, start);
                permute(avx512, &mut ours, &RC[rounds.first()..]);
                keccak_crate(&mut theirs, rounds);
                assert_eq!(ours, theirs, "{rounds:?}, seed {seed}");
                if seed <= 50 {
                    let mut reference = start;
                    keccak_p(&mut reference, rounds.count());
                    assert_eq!(ours, reference, "{rounds:?}, seed {seed}: the reference");
                }
            }
            for start in [[0u64; 25], [!0u64; 25]] {
                let (mut ours, mut theirs) = (start, start);
                permute(avx512, &mut ours, &RC[rounds.first()..]);
                keccak_crate(&mut theirs, rounds);
                assert_eq!(ours, theirs, "{rounds:?}, {:x}", start[0]);
            }
        }
    }

    #[test]
    #[cfg_attr(
        not(treehash_test_avx512),
        ignore = "the CPU that built this test has no AVX-512F (build.rs)"
    )]
    fn whole_blocks_absorb_like_the_keccak_crate_at_every_rate() {
        let avx512 = avx512_for_test("whole_blocks_absorb_like_the_keccak_crate_at_every_rate")
            .expect(NEEDS_AVX512);
        for rounds in [Rounds::Turbo12, Rounds::Keccak24] {
            // The FIPS 202 rates, and the extremes of whole lanes.
            for rate in [72, 104, 136, 144, 168, 8, 200] {
                for len in [0, 1, rate - 1, rate, rate + 1, 5 * rate, 5 * rate + 7] {
                    // The data ends where the last whole block ends (or
                    // the tail does): a load past it would be caught by
                    // nothing here, but the masks keep within it.
                    let data: Vec<u8> = (0..len).map(|k| (k * 29 + rate) as u8).collect();
                    let mut ours = test_state(len as u64 + 3);
                    let mut want = ours;
                    let left = absorb_blocks(avx512, &mut ours, &data, rate, &RC[rounds.first()..]);
                    assert_eq!(left, len % rate, "rate {rate}, len {len}");
                    let whole = len - len % rate;
                    absorb_runs_one_by_one(
                        std::slice::from_mut(&mut want),
                        &data,
                        0,
                        whole,
                        rate,
                        rounds,
                    );
                    assert_eq!(ours, want, "{rounds:?}, rate {rate}, len {len}");
                }
            }
        }
    }
}
