//! Keccak-p\[1600, n_r\] and the sponge over it, from FIPS 202 as written:
//! slow, plain, and checked against RustCrypto's `keccak`, `sha3` and `shake`.
//!
//! The state is FIPS 202's `A[x, y]`: 25 lanes of 64 bits, lane (x, y) at
//! [`index`]`(x, y)` = x + 5y, bit z of a lane is bit z of the `u64`, and byte k
//! of a byte string lies in lane k / 8 at bits 8(k mod 8) .. 8(k mod 8) + 7
//! (§3.1.2 and the `h2b` convention of Appendix B.1).

/// The state: lane (x, y) is `state[index(x, y)]`.
pub type State = [u64; 25];

/// The lane width w in bits (b = 1600 = 25w, ℓ = log2 w = 6).
const LANE_BITS: u32 = 64;

/// The width b in bytes.
pub const WIDTH_BYTES: usize = 200;

/// n_r of Keccak-f\[1600\] = Keccak-p\[1600, 24\] (FIPS 202 §3.4): 12 + 2ℓ.
pub const KECCAK_F_ROUNDS: usize = 24;

/// Where lane (x, y) lives in [`State`]; x and y are taken mod 5.
pub const fn index(x: usize, y: usize) -> usize {
    (x % 5) + 5 * (y % 5)
}

/// rc(t), FIPS 202 §3.2.5 Algorithm 5: one bit of an 8-bit LFSR.
const fn rc(t: usize) -> u64 {
    if t.is_multiple_of(255) {
        return 1;
    }
    // R[i] is bit i of `r`; R = 10000000 means R[0] = 1.
    let mut r: u16 = 1;
    let mut i = 1;
    while i <= t % 255 {
        r <<= 1; // R = 0 ‖ R
        let r8 = (r >> 8) & 1;
        r ^= r8; // R[0] ^= R[8]
        r ^= r8 << 4; // R[4] ^= R[8]
        r ^= r8 << 5; // R[5] ^= R[8]
        r ^= r8 << 6; // R[6] ^= R[8]
        r &= 0xff; // R = Trunc8(R)
        i += 1;
    }
    (r & 1) as u64
}

/// RC for round i_r, FIPS 202 §3.2.5 Algorithm 6: RC\[2^j − 1\] = rc(j + 7 i_r).
const fn round_constant(round: usize) -> u64 {
    let mut rc_lane = 0;
    let mut j = 0;
    while j <= 6 {
        rc_lane |= rc(j + 7 * round) << ((1 << j) - 1);
        j += 1;
    }
    rc_lane
}

/// The round constants of rounds 0 to 23, computed at compile time.
const ROUND_CONSTANTS: [u64; KECCAK_F_ROUNDS] = {
    let mut table = [0; KECCAK_F_ROUNDS];
    let mut round = 0;
    while round < KECCAK_F_ROUNDS {
        table[round] = round_constant(round);
        round += 1;
    }
    table
};

/// ρ's offsets, FIPS 202 §3.2.2 Algorithm 2: from (x, y) = (1, 0), lane t
/// (t = 0 .. 23) is rotated by (t + 1)(t + 2)/2 and (x, y) ← (y, (2x + 3y) mod 5).
/// Lane (0, 0) is not rotated.
const RHO_OFFSETS: [u32; 25] = {
    let mut offsets = [0; 25];
    let (mut x, mut y) = (1, 0);
    let mut t = 0;
    while t < 24 {
        offsets[index(x, y)] = (((t + 1) * (t + 2) / 2) % LANE_BITS as usize) as u32;
        let next_y = (2 * x + 3 * y) % 5;
        x = y;
        y = next_y;
        t += 1;
    }
    offsets
};

/// θ, §3.2.1: each bit is XORed with the parities of two nearby columns.
fn theta(a: &mut State) {
    let mut c = [0u64; 5];
    for (x, column) in c.iter_mut().enumerate() {
        *column = (0..5).fold(0, |parity, y| parity ^ a[index(x, y)]);
    }
    for x in 0..5 {
        // D[x, z] = C[x − 1, z] ⊕ C[x + 1, z − 1]
        let d = c[(x + 4) % 5] ^ c[(x + 1) % 5].rotate_left(1);
        for y in 0..5 {
            a[index(x, y)] ^= d;
        }
    }
}

/// ρ, §3.2.2: A′[x, y, z] = A[x, y, (z − offset) mod w], a left rotation.
fn rho(a: &mut State) {
    for (lane, offset) in a.iter_mut().zip(RHO_OFFSETS) {
        *lane = lane.rotate_left(offset);
    }
}

/// π, §3.2.3: A′[x, y] = A[(x + 3y) mod 5, x].
fn pi(a: &mut State) {
    let before = *a;
    for x in 0..5 {
        for y in 0..5 {
            a[index(x, y)] = before[index(x + 3 * y, x)];
        }
    }
}

/// χ, §3.2.4: A′[x, y] = A[x, y] ⊕ (¬A[x + 1, y] ∧ A[x + 2, y]).
fn chi(a: &mut State) {
    let before = *a;
    for x in 0..5 {
        for y in 0..5 {
            a[index(x, y)] =
                before[index(x, y)] ^ (!before[index(x + 1, y)] & before[index(x + 2, y)]);
        }
    }
}

/// ι, §3.2.5: lane (0, 0) is XORed with the round constant of round i_r.
fn iota(a: &mut State, round: usize) {
    a[index(0, 0)] ^= ROUND_CONSTANTS[round];
}

/// Rnd(A, i_r) = ι(χ(π(ρ(θ(A)))), i_r), §3.3.
fn round(a: &mut State, round_index: usize) {
    theta(a);
    rho(a);
    pi(a);
    chi(a);
    iota(a, round_index);
}

/// Keccak-p\[1600, n_r\], FIPS 202 §3.3 Algorithm 7: rounds 12 + 2ℓ − n_r to
/// 12 + 2ℓ − 1, that is the *last* n_r rounds of Keccak-f\[1600\] (24 − n_r to 23).
///
/// # Panics
/// If `rounds` is more than 24 (FIPS 202 allows more, but no function here uses
/// them and the round constants would then wrap).
pub fn keccak_p(a: &mut State, rounds: usize) {
    assert!(
        rounds <= KECCAK_F_ROUNDS,
        "Keccak-p[1600, {rounds}]: at most 24 rounds"
    );
    for round_index in KECCAK_F_ROUNDS - rounds..KECCAK_F_ROUNDS {
        round(a, round_index);
    }
}

/// Keccak-f\[1600\] = Keccak-p\[1600, 24\], FIPS 202 §3.4: the permutation of SHA-3.
pub fn keccak_f(a: &mut State) {
    keccak_p(a, KECCAK_F_ROUNDS);
}

/// The state as a byte string S (FIPS 202 §3.1.3 with Appendix B.1's byte order).
fn state_bytes(a: &State) -> [u8; WIDTH_BYTES] {
    let mut bytes = [0; WIDTH_BYTES];
    for (chunk, lane) in bytes.chunks_exact_mut(8).zip(a) {
        chunk.copy_from_slice(&lane.to_le_bytes());
    }
    bytes
}

/// XORs `block` into the first bytes of the state.
fn xor_into_state(a: &mut State, block: &[u8]) {
    for (k, byte) in block.iter().enumerate() {
        a[k / 8] ^= u64::from(*byte) << (8 * (k % 8));
    }
}

/// SPONGE[Keccak-p\[1600, n_r\], pad10*1, r](M ‖ suffix, 8·out_len), FIPS 202
/// §4 Algorithm 8, on whole bytes: `out_len` bytes of output.
///
/// `domain` is the byte that follows the message: the function's suffix bits
/// and the first bit of pad10*1 (FIPS 202 §B.2): `06` for SHA3-*, `1F` for
/// SHAKE*, `04` for cSHAKE, D for TurboSHAKE (RFC 9861 §2.2). The padded input is
/// M ‖ domain ‖ `00`…, to a multiple of the rate, with `80` XORed into its last
/// byte (pad10*1's last bit).
///
/// # Panics
/// If the rate is not a whole number of lanes below the width, or `domain` is
/// `00` or has its top bit set (it would collide with pad10*1's last bit).
pub fn sponge(rate: usize, rounds: usize, domain: u8, message: &[u8], out_len: usize) -> Vec<u8> {
    assert!(
        rate > 0 && rate < WIDTH_BYTES && rate.is_multiple_of(8),
        "rate {rate} is not a whole number of lanes below 200 bytes"
    );
    assert!(
        (0x01..=0x7f).contains(&domain),
        "domain byte {domain:#04x} is outside 01..7F"
    );

    // Padding: P = M ‖ domain ‖ 00 … 00, |P| a multiple of r; P[|P| − 1] ^= 80.
    let mut padded = message.to_vec();
    padded.push(domain);
    padded.resize(padded.len().div_ceil(rate) * rate, 0);
    let last = padded.len() - 1;
    padded[last] ^= 0x80;

    // Absorbing: S = f(S ⊕ (P_i ‖ 0^c)) for every block.
    let mut state: State = [0; 25];
    for block in padded.chunks_exact(rate) {
        xor_into_state(&mut state, block);
        keccak_p(&mut state, rounds);
    }

    // Squeezing: Z = Z ‖ Trunc_r(S), then S = f(S), until |Z| ≥ out_len.
    let mut output = Vec::with_capacity(out_len + rate);
    loop {
        output.extend_from_slice(&state_bytes(&state)[..rate]);
        if output.len() >= out_len {
            break;
        }
        keccak_p(&mut state, rounds);
    }
    output.truncate(out_len);
    output
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Node, node_function};

    /// A state with every lane different, from a simple counter (no RNG needed).
    fn test_state(seed: u64) -> State {
        let mut a = [0; 25];
        let mut v = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        for lane in &mut a {
            v ^= v << 13;
            v ^= v >> 7;
            v ^= v << 17;
            *lane = v;
        }
        a
    }

    fn rustcrypto_p1600<const ROUNDS: usize>(mut a: State) -> State {
        keccak::Keccak::new().with_p1600::<ROUNDS>(|p| p(&mut a));
        a
    }

    #[test]
    fn round_constants_are_fips_202s() {
        // The first, second and last constants as FIPS 202 and every Keccak
        // implementation list them.
        assert_eq!(ROUND_CONSTANTS[0], 0x0000_0000_0000_0001);
        assert_eq!(ROUND_CONSTANTS[1], 0x0000_0000_0000_8082);
        assert_eq!(ROUND_CONSTANTS[23], 0x8000_0000_8000_8008);
        assert_eq!(RHO_OFFSETS[index(0, 0)], 0);
        assert_eq!(RHO_OFFSETS[index(1, 0)], 1);
        assert_eq!(RHO_OFFSETS[index(4, 4)], 14);
    }

    /// Keccak-f and Keccak-p with 12 rounds (and a few other counts) match the
    /// `keccak` crate, whose Keccak-p also takes the last rounds.
    #[test]
    fn permutation_matches_the_keccak_crate() {
        let seeds = if cfg!(miri) { 2 } else { 8 };
        for seed in 0..seeds {
            let a = test_state(seed);
            let ours = |rounds| {
                let mut b = a;
                keccak_p(&mut b, rounds);
                b
            };
            let mut f = a;
            keccak_f(&mut f);
            let mut theirs = a;
            keccak::Keccak::new().with_f1600(|p| p(&mut theirs));
            assert_eq!(f, theirs, "Keccak-f[1600], seed {seed}");
            assert_eq!(ours(24), theirs);
            assert_eq!(
                ours(12),
                rustcrypto_p1600::<12>(a),
                "12 rounds, seed {seed}"
            );
            assert_eq!(ours(1), rustcrypto_p1600::<1>(a), "1 round, seed {seed}");
            assert_eq!(
                ours(14),
                rustcrypto_p1600::<14>(a),
                "14 rounds, seed {seed}"
            );
            assert_eq!(ours(0), a);
        }
    }

    /// The sponge with 24 rounds is SHA3-* and SHAKE* (RustCrypto's, through
    /// [`node_function`]), for messages and outputs on either side of the rate.
    #[test]
    fn sponge_is_fips_202() {
        for node in Node::ALL {
            let rate = node.rate();
            // Under Miri, where a permutation takes a good part of a
            // second, the lengths on either side of the rate only.
            let lens = if cfg!(miri) {
                vec![rate - 1, rate]
            } else {
                vec![0, 1, rate - 1, rate, rate + 1, 2 * rate, 3 * rate + 5]
            };
            for len in lens {
                let message: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
                let out_lens: Vec<usize> = if cfg!(miri) && node.is_xof() {
                    vec![rate + 1]
                } else if node.is_xof() {
                    vec![1, 32, rate - 1, rate, rate + 1, 3 * rate + 2]
                } else {
                    vec![node.chaining_len()]
                };
                for out_len in out_lens {
                    assert_eq!(
                        sponge(rate, KECCAK_F_ROUNDS, node.domain_byte(), &message, out_len),
                        node_function(node, &message, out_len),
                        "{node:?}, {len}-byte message, {out_len}-byte output"
                    );
                }
            }
        }
    }

    #[test]
    #[should_panic(expected = "outside 01..7F")]
    fn a_domain_byte_with_the_top_bit_is_refused() {
        sponge(168, 12, 0x80, b"", 32);
    }
}
