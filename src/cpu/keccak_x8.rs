//! Keccak-f[1600] on eight independent states at once with AVX-512: lane k
//! of the eight states sits in one 512-bit register, so one instruction
//! advances eight leaves. `vprolq` does the rotations and `vpternlogq` the
//! three-input steps of theta and chi.
//!
//! Only compiled for x86-64 and only called after `is_available()`.

use std::arch::x86_64::*;

/// Eight states, lane-major: `state[k]` holds lane k of each of the eight.
pub type StateX8 = [__m512i; 25];

/// True when this CPU can run the eight-lane permutation.
pub fn is_available() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
}

const RC: [u64; 24] = [
    0x0000000000000001,
    0x0000000000008082,
    0x800000000000808a,
    0x8000000080008000,
    0x000000000000808b,
    0x0000000080000001,
    0x8000000080008081,
    0x8000000000008009,
    0x000000000000008a,
    0x0000000000000088,
    0x0000000080008009,
    0x000000008000000a,
    0x000000008000808b,
    0x800000000000008b,
    0x8000000000008089,
    0x8000000000008003,
    0x8000000000008002,
    0x8000000000000080,
    0x000000000000800a,
    0x800000008000000a,
    0x8000000080008081,
    0x8000000000008080,
    0x0000000080000001,
    0x8000000080008008,
];

/// x ^ y ^ z in one instruction.
#[inline]
#[target_feature(enable = "avx512f")]
fn xor3(x: __m512i, y: __m512i, z: __m512i) -> __m512i {
    _mm512_ternarylogic_epi64::<0x96>(x, y, z)
}

/// x ^ (!y & z), the chi step, in one instruction.
#[inline]
#[target_feature(enable = "avx512f")]
fn chi(x: __m512i, y: __m512i, z: __m512i) -> __m512i {
    _mm512_ternarylogic_epi64::<0xD2>(x, y, z)
}

/// Rotates lane `$from` of `$a` by `$rot` and stores it at lane `$to` of `$b`
/// (rho and pi together); the rotation must be a constant for `vprolq`.
macro_rules! rho_pi {
    ($a:ident, $b:ident; $($from:literal => $to:literal by $rot:literal),* $(,)?) => {
        $( $b[$to] = _mm512_rol_epi64::<$rot>($a[$from]); )*
    };
}

/// The permutation, 24 rounds, on eight states. Callers without AVX-512F
/// enabled must check `is_available()` first (hence `unsafe` for them).
#[target_feature(enable = "avx512f")]
pub fn f1600_x8(a: &mut StateX8) {
    for rc in RC {
        // theta
        let mut c = [_mm512_setzero_si512(); 5];
        for x in 0..5 {
            c[x] = xor3(xor3(a[x], a[x + 5], a[x + 10]), a[x + 15], a[x + 20]);
        }
        for x in 0..5 {
            let d = _mm512_xor_si512(c[(x + 4) % 5], _mm512_rol_epi64::<1>(c[(x + 1) % 5]));
            for y in 0..5 {
                a[x + 5 * y] = _mm512_xor_si512(a[x + 5 * y], d);
            }
        }
        // rho and pi: lane (x, y) = x + 5y rotated by r[x][y] moves to (y, 2x + 3y).
        let mut b = [_mm512_setzero_si512(); 25];
        b[0] = a[0];
        rho_pi!(a, b;
            1 => 10 by 1, 2 => 20 by 62, 3 => 5 by 28, 4 => 15 by 27,
            5 => 16 by 36, 6 => 1 by 44, 7 => 11 by 6, 8 => 21 by 55, 9 => 6 by 20,
            10 => 7 by 3, 11 => 17 by 10, 12 => 2 by 43, 13 => 12 by 25, 14 => 22 by 39,
            15 => 23 by 41, 16 => 8 by 45, 17 => 18 by 15, 18 => 3 by 21, 19 => 13 by 8,
            20 => 14 by 18, 21 => 24 by 2, 22 => 9 by 61, 23 => 19 by 56, 24 => 4 by 14,
        );
        // chi
        for y in 0..5 {
            for x in 0..5 {
                a[x + 5 * y] = chi(b[x + 5 * y], b[(x + 1) % 5 + 5 * y], b[(x + 2) % 5 + 5 * y]);
            }
        }
        // iota
        a[0] = _mm512_xor_si512(a[0], _mm512_set1_epi64(rc as i64));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eight_lanes_match_the_keccak_crate() {
        if !is_available() {
            eprintln!("SKIPPED eight_lanes_match_the_keccak_crate: no AVX-512 on this CPU");
            return;
        }
        let mut scalar = [[0u64; 25]; 8];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for state in scalar.iter_mut() {
            for lane in state.iter_mut() {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                *lane = seed;
            }
        }
        // SAFETY: AVX-512F checked above; lanes are read and written as u64 arrays.
        let mut x8: StateX8 = unsafe { std::mem::zeroed() };
        for (k, reg) in x8.iter_mut().enumerate() {
            let column: [u64; 8] = std::array::from_fn(|i| scalar[i][k]);
            *reg = unsafe { std::mem::transmute::<[u64; 8], __m512i>(column) };
        }
        for _ in 0..3 {
            unsafe { f1600_x8(&mut x8) };
            for state in scalar.iter_mut() {
                keccak::Keccak::new().with_f1600(|f| f(state));
            }
        }
        for (k, reg) in x8.iter().enumerate() {
            let column: [u64; 8] = unsafe { std::mem::transmute::<__m512i, [u64; 8]>(*reg) };
            for i in 0..8 {
                assert_eq!(column[i], scalar[i][k], "state {i}, lane {k}");
            }
        }
    }
}
