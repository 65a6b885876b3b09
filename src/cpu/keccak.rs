//! Keccak-p[1600, n_r]'s round constants and its round, written once for
//! every lane kernel of the CPU backend, and the permutation of one state:
//! [`p1600`] runs the fastest kernel this CPU has ([`OneState`], chosen in
//! `platform.rs`), the portable one being [`p1600_scalar`] (XKCP's opt64,
//! lane complemented) and AVX-512's `keccak_x1`. How many rounds a
//! permutation runs is a [`Rounds`], in `sponge.rs` with the rest of a
//! sponge's description.

pub(crate) use super::platform::OneState;
#[cfg(all(test, target_arch = "x86_64"))]
pub(crate) use super::platform::avx512_for_test;
use crate::sponge::Rounds;

/// The round constants of iota, round 0 first: one per round of Keccak-f.
pub(crate) const RC: [u64; Rounds::Keccak24.count()] = [
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

// The kernels run two rounds per loop turn.
const _: () = assert!(
    Rounds::Keccak24.count().is_multiple_of(2) && Rounds::Turbo12.count().is_multiple_of(2)
);

/// Keccak-p[1600, n_r] on `$a` (a `&mut [T; 25]`, lane x + 5y at index
/// x + 5y) for any lane type `T`, with `$rounds` (a [`Rounds`]) giving n_r:
/// written once for the scalar test instance and the AVX2 and AVX-512
/// kernels. The caller's scope supplies the lane operations as macros:
/// `xor!(x, y)`, `xor5!(a, b, c, d, e)`, `rol!(x, n)` (n a literal, 0 to
/// 63), `chi!(x, y, z)` = x ^ (!y & z) and `lane!(v)`, the lane whose every
/// word is the u64 `v`.
///
/// Each round reads one state and writes the other (two rounds per loop
/// turn, so nothing is copied), a row of five output lanes at a time: theta's
/// D, rho and pi are applied to the five lanes that row needs as they are
/// loaded, chi and iota make the row, and the row is folded into the next
/// round's column parities C at once. Only C, D and one row are live, so the
/// states can stay in memory (XKCP's "ThetaRhoPiChiIotaPrepareTheta"), as
/// AVX2's 16 registers need; with AVX-512's 32 the compiler keeps most of
/// them in registers.
#[cfg(any(test, target_arch = "x86_64"))]
macro_rules! keccak_p1600 {
    ($a:expr, $rounds:expr) => {{
        let a = $a;
        let rounds: $crate::sponge::Rounds = $rounds;
        let mut c = [
            xor5!(a[0], a[5], a[10], a[15], a[20]),
            xor5!(a[1], a[6], a[11], a[16], a[21]),
            xor5!(a[2], a[7], a[12], a[17], a[22]),
            xor5!(a[3], a[8], a[13], a[18], a[23]),
            xor5!(a[4], a[9], a[14], a[19], a[24]),
        ];
        let mut e = *a;
        let mut round = rounds.first();
        while round < $crate::cpu::keccak::RC.len() {
            $crate::cpu::keccak::keccak_round!(a, e, c, $crate::cpu::keccak::RC[round]);
            $crate::cpu::keccak::keccak_round!(e, a, c, $crate::cpu::keccak::RC[round + 1]);
            round += 2;
        }
    }};
}
#[cfg(target_arch = "x86_64")]
pub(crate) use keccak_p1600;

/// One round from state `$src` into state `$dst`; `$c` holds the column
/// parities of `$src` on entry and of `$dst` on exit; `$rc` is iota's constant.
///
/// Rho and pi by destination: lane (X, Y) of the output comes from lane
/// (x, X) with x = X + 3Y mod 5, rotated by that lane's rho offset. Each row
/// below lists, for X = 0 … 4, the source lane's index and its offset.
#[cfg(any(test, target_arch = "x86_64"))]
macro_rules! keccak_round {
    ($src:ident, $dst:ident, $c:ident, $rc:expr) => {{
        let d = [
            xor!($c[4], rol!($c[1], 1)),
            xor!($c[0], rol!($c[2], 1)),
            xor!($c[1], rol!($c[3], 1)),
            xor!($c[2], rol!($c[4], 1)),
            xor!($c[3], rol!($c[0], 1)),
        ];
        $crate::cpu::keccak::keccak_row!(first $src, $dst, $c, d, $rc; 0; 0 0, 6 44, 12 43, 18 21, 24 14);
        $crate::cpu::keccak::keccak_row!(next $src, $dst, $c, d; 5; 3 28, 9 20, 10 3, 16 45, 22 61);
        $crate::cpu::keccak::keccak_row!(next $src, $dst, $c, d; 10; 1 1, 7 6, 13 25, 19 8, 20 18);
        $crate::cpu::keccak::keccak_row!(next $src, $dst, $c, d; 15; 4 27, 5 36, 11 10, 17 15, 23 56);
        $crate::cpu::keccak::keccak_row!(next $src, $dst, $c, d; 20; 2 62, 8 55, 14 39, 15 41, 21 2);
    }};
}
#[cfg(any(test, target_arch = "x86_64"))]
pub(crate) use keccak_round;

/// One output row (lanes `$y` … `$y` + 4) of a round: the five source lanes
/// (`$s` with rho offset `$r`) get D, rho and pi, then chi (and iota on the
/// first row); the row starts (`first`) or updates (`next`) the parities `$c`.
#[cfg(any(test, target_arch = "x86_64"))]
macro_rules! keccak_row {
    (first $src:ident, $dst:ident, $c:ident, $d:ident, $rc:expr; $y:tt;
     $s0:tt $r0:tt, $s1:tt $r1:tt, $s2:tt $r2:tt, $s3:tt $r3:tt, $s4:tt $r4:tt) => {{
        let b = $crate::cpu::keccak::keccak_row!(@b $src, $d; $s0 $r0, $s1 $r1, $s2 $r2, $s3 $r3, $s4 $r4);
        $c = [
            xor!(chi!(b[0], b[1], b[2]), lane!($rc)),
            chi!(b[1], b[2], b[3]),
            chi!(b[2], b[3], b[4]),
            chi!(b[3], b[4], b[0]),
            chi!(b[4], b[0], b[1]),
        ];
        $dst[$y..$y + 5].copy_from_slice(&$c);
    }};
    (next $src:ident, $dst:ident, $c:ident, $d:ident; $y:tt;
     $s0:tt $r0:tt, $s1:tt $r1:tt, $s2:tt $r2:tt, $s3:tt $r3:tt, $s4:tt $r4:tt) => {{
        let b = $crate::cpu::keccak::keccak_row!(@b $src, $d; $s0 $r0, $s1 $r1, $s2 $r2, $s3 $r3, $s4 $r4);
        let row = [
            chi!(b[0], b[1], b[2]),
            chi!(b[1], b[2], b[3]),
            chi!(b[2], b[3], b[4]),
            chi!(b[3], b[4], b[0]),
            chi!(b[4], b[0], b[1]),
        ];
        $dst[$y..$y + 5].copy_from_slice(&row);
        $c = [
            xor!($c[0], row[0]),
            xor!($c[1], row[1]),
            xor!($c[2], row[2]),
            xor!($c[3], row[3]),
            xor!($c[4], row[4]),
        ];
    }};
    // Theta's D (by the source lane's column), then rho's rotation.
    (@b $src:ident, $d:ident; $s0:tt $r0:tt, $s1:tt $r1:tt, $s2:tt $r2:tt, $s3:tt $r3:tt, $s4:tt $r4:tt) => {
        [
            rol!(xor!($src[$s0], $d[$s0 % 5]), $r0),
            rol!(xor!($src[$s1], $d[$s1 % 5]), $r1),
            rol!(xor!($src[$s2], $d[$s2 % 5]), $r2),
            rol!(xor!($src[$s3], $d[$s3 % 5]), $r3),
            rol!(xor!($src[$s4], $d[$s4 % 5]), $r4),
        ]
    };
}
#[cfg(any(test, target_arch = "x86_64"))]
pub(crate) use keccak_row;

/// Keccak-p[1600, n_r] on one state, with the fastest one-state kernel
/// this CPU has ([`OneState::best`], from the features detected once).
/// The sponges that hold a kernel call it directly; on x86-64 outside Miri
/// only the tests and measurements call this (`fast_sponge` runs OpenSSL's
/// assembly there).
#[inline]
#[cfg_attr(
    all(target_arch = "x86_64", not(target_vendor = "apple"), not(miri)),
    allow(dead_code)
)]
pub(crate) fn p1600(state: &mut [u64; 25], rounds: Rounds) {
    OneState::best().permute(state, rounds);
}

impl OneState {
    /// Keccak-p[1600, `rounds`] on `state` with this kernel.
    #[inline]
    pub(crate) fn permute(self, state: &mut [u64; 25], rounds: Rounds) {
        match self {
            OneState::Portable => p1600_scalar(state, rounds),
            #[cfg(target_arch = "x86_64")]
            OneState::Avx512(avx512) => {
                super::keccak_x1::permute(avx512, state, &RC[rounds.first()..])
            }
        }
    }

    /// XORs each whole `rate`-byte block of `data` into `state` from
    /// position 0, a permutation after each: the count of bytes left over
    /// at the end (fewer than `rate`). `rate` is a multiple of 8 up to 200.
    #[inline]
    pub(crate) fn absorb_blocks(
        self,
        state: &mut [u64; 25],
        data: &[u8],
        rate: usize,
        rounds: Rounds,
    ) -> usize {
        match self {
            OneState::Portable => {
                let mut blocks = data.chunks_exact(rate);
                for block in &mut blocks {
                    for (lane, word) in state.iter_mut().zip(block.chunks_exact(8)) {
                        *lane ^= u64::from_le_bytes(word.try_into().expect("8 bytes"));
                    }
                    p1600_scalar(state, rounds);
                }
                blocks.remainder().len()
            }
            #[cfg(target_arch = "x86_64")]
            OneState::Avx512(avx512) => {
                super::keccak_x1::absorb_blocks(avx512, state, data, rate, &RC[rounds.first()..])
            }
        }
    }
}

/// Keccak-p[1600, n_r] on one state in plain 64-bit words, after XKCP's
/// `KeccakP-1600-opt64.c` (its `thetaRhoPiChiIotaPrepareTheta` with lane
/// complementing, pattern "bebigokimisa"): six lanes are kept inverted, so
/// that chi needs one NOT per row instead of five. Two rounds per loop
/// turn, each from one state into the other, the next round's column
/// parities gathered as the rows are made. Fully unrolled it ran slower
/// here (docs/decisions/0029-one-state-keccak-avx512.md).
pub(crate) fn p1600_scalar(state: &mut [u64; 25], rounds: Rounds) {
    /// The lanes kept complemented: be, bi, go, ki, mi, sa.
    const COMPLEMENTED: [usize; 6] = [1, 2, 8, 12, 17, 20];
    let mut a = *state;
    for k in COMPLEMENTED {
        a[k] = !a[k];
    }
    let mut c: [u64; 5] =
        std::array::from_fn(|x| a[x] ^ a[x + 5] ^ a[x + 10] ^ a[x + 15] ^ a[x + 20]);
    let mut e = [0u64; 25];
    let mut round = rounds.first();
    while round < RC.len() {
        lc_round!(a, e, c, RC[round]);
        lc_round!(e, a, c, RC[round + 1]);
        round += 2;
    }
    for k in COMPLEMENTED {
        a[k] = !a[k];
    }
    *state = a;
}

/// One lane-complemented round from `$a` into `$e`; `$c` holds the column
/// parities of `$a` on entry and those of `$e` on exit.
macro_rules! lc_round {
    ($a:ident, $e:ident, $c:ident, $rc:expr) => {{
        let d = [
            $c[4] ^ $c[1].rotate_left(1),
            $c[0] ^ $c[2].rotate_left(1),
            $c[1] ^ $c[3].rotate_left(1),
            $c[2] ^ $c[4].rotate_left(1),
            $c[3] ^ $c[0].rotate_left(1),
        ];
        let b = lc_round!(@b $a, d; 0 0, 6 44, 12 43, 18 21, 24 14);
        let row = [
            b[0] ^ (b[1] | b[2]) ^ $rc,
            b[1] ^ (!b[2] | b[3]),
            b[2] ^ (b[3] & b[4]),
            b[3] ^ (b[4] | b[0]),
            b[4] ^ (b[0] & b[1]),
        ];
        $e[0..5].copy_from_slice(&row);
        $c = row;
        let b = lc_round!(@b $a, d; 3 28, 9 20, 10 3, 16 45, 22 61);
        let row = [
            b[0] ^ (b[1] | b[2]),
            b[1] ^ (b[2] & b[3]),
            b[2] ^ (b[3] | !b[4]),
            b[3] ^ (b[4] | b[0]),
            b[4] ^ (b[0] & b[1]),
        ];
        lc_round!(@put $e, $c, row, 5);
        let b = lc_round!(@b $a, d; 1 1, 7 6, 13 25, 19 8, 20 18);
        let row = [
            b[0] ^ (b[1] | b[2]),
            b[1] ^ (b[2] & b[3]),
            b[2] ^ (!b[3] & b[4]),
            !b[3] ^ (b[4] | b[0]),
            b[4] ^ (b[0] & b[1]),
        ];
        lc_round!(@put $e, $c, row, 10);
        let b = lc_round!(@b $a, d; 4 27, 5 36, 11 10, 17 15, 23 56);
        let row = [
            b[0] ^ (b[1] & b[2]),
            b[1] ^ (b[2] | b[3]),
            b[2] ^ (!b[3] | b[4]),
            !b[3] ^ (b[4] & b[0]),
            b[4] ^ (b[0] | b[1]),
        ];
        lc_round!(@put $e, $c, row, 15);
        let b = lc_round!(@b $a, d; 2 62, 8 55, 14 39, 15 41, 21 2);
        let row = [
            b[0] ^ (!b[1] & b[2]),
            !b[1] ^ (b[2] | b[3]),
            b[2] ^ (b[3] & b[4]),
            b[3] ^ (b[4] | b[0]),
            b[4] ^ (b[0] & b[1]),
        ];
        lc_round!(@put $e, $c, row, 20);
    }};
    (@b $a:ident, $d:ident; $s0:tt $r0:tt, $s1:tt $r1:tt, $s2:tt $r2:tt, $s3:tt $r3:tt, $s4:tt $r4:tt) => {
        [
            ($a[$s0] ^ $d[$s0 % 5]).rotate_left($r0),
            ($a[$s1] ^ $d[$s1 % 5]).rotate_left($r1),
            ($a[$s2] ^ $d[$s2 % 5]).rotate_left($r2),
            ($a[$s3] ^ $d[$s3 % 5]).rotate_left($r3),
            ($a[$s4] ^ $d[$s4 % 5]).rotate_left($r4),
        ]
    };
    (@put $e:ident, $c:ident, $row:ident, $y:tt) => {
        $e[$y..$y + 5].copy_from_slice(&$row);
        for x in 0..5 {
            $c[x] ^= $row[x];
        }
    };
}
use lc_round;

/// [`keccak_p1600!`] on plain u64 lanes: the shared round structure, tested
/// here on any CPU against the keccak crate.
#[cfg(test)]
fn p1600_by_rows(state: &mut [u64; 25], rounds: Rounds) {
    macro_rules! xor {
        ($x:expr, $y:expr) => {
            $x ^ $y
        };
    }
    macro_rules! xor5 {
        ($a:expr, $b:expr, $c:expr, $d:expr, $e:expr) => {
            $a ^ $b ^ $c ^ $d ^ $e
        };
    }
    macro_rules! rol {
        ($x:expr, $n:tt) => {
            u64::rotate_left($x, $n)
        };
    }
    macro_rules! chi {
        ($x:expr, $y:expr, $z:expr) => {
            $x ^ (!$y & $z)
        };
    }
    macro_rules! lane {
        ($v:expr) => {
            $v
        };
    }
    keccak_p1600!(state, rounds);
}

/// A state with random-looking lanes, for the permutation tests.
#[cfg(test)]
pub(crate) fn test_state(seed: u64) -> [u64; 25] {
    let mut x = seed | 1;
    std::array::from_fn(|_| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    })
}

/// The keccak crate's Keccak-p[1600, n_r], called directly: the tests'
/// independent permutation.
#[cfg(test)]
pub(crate) fn keccak_crate(state: &mut [u64; 25], rounds: Rounds) {
    let keccak = keccak::Keccak::new();
    match rounds {
        Rounds::Keccak24 => keccak.with_p1600::<24>(|p| p(state)),
        Rounds::Turbo12 => keccak.with_p1600::<12>(|p| p(state)),
    }
}

/// Scalar sponges absorbing what the lane groups' `absorb_blocks` takes:
/// state `i` takes the `len` bytes at `i · stride` of `data`, in blocks of
/// `rate`, a permutation after each.
#[cfg(test)]
pub(crate) fn absorb_runs_one_by_one(
    states: &mut [[u64; 25]],
    data: &[u8],
    stride: usize,
    len: usize,
    rate: usize,
    rounds: Rounds,
) {
    for (i, state) in states.iter_mut().enumerate() {
        for block in data[i * stride..i * stride + len].chunks(rate) {
            for (lane, word) in state.iter_mut().zip(block.chunks(8)) {
                *lane ^= u64::from_le_bytes(word.try_into().unwrap());
            }
            keccak_crate(state, rounds);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// States tried per test: a few under Miri, where a permutation takes
    /// a good part of a second.
    const SEEDS: u64 = if cfg!(miri) { 3 } else { 20 };

    /// The keccak crate's permutation of a copy of `state`.
    fn permuted(mut state: [u64; 25], rounds: Rounds) -> [u64; 25] {
        keccak_crate(&mut state, rounds);
        state
    }

    #[test]
    fn the_scalar_permutation_matches_the_keccak_crate_and_the_reference() {
        // Many states natively; under Miri a few, as each takes long there.
        let seeds = if cfg!(miri) { 3 } else { 2000 };
        for rounds in [Rounds::Turbo12, Rounds::Keccak24] {
            for seed in 1..=seeds {
                let start = test_state(seed);
                let mut ours = start;
                p1600_scalar(&mut ours, rounds);
                assert_eq!(ours, permuted(start, rounds), "{rounds:?}, seed {seed}");
                if seed <= SEEDS {
                    let mut reference = start;
                    treehash_reference::keccak::keccak_p(&mut reference, rounds.count());
                    assert_eq!(ours, reference, "{rounds:?}, seed {seed}: the reference");
                }
            }
            // The all-zero and all-one states: every lane complemented.
            for start in [[0u64; 25], [!0u64; 25]] {
                let mut ours = start;
                p1600_scalar(&mut ours, rounds);
                assert_eq!(ours, permuted(start, rounds), "{rounds:?}, {:x}", start[0]);
            }
        }
    }

    #[test]
    fn every_one_state_kernel_and_the_dispatch_agree() {
        // Under Miri the detected kernel is the portable one (no AVX-512
        // there); keccak_x1's own tests cover AVX-512 natively.
        let kernels = [
            Some(OneState::Portable),
            Some(OneState::best()),
            #[cfg(target_arch = "x86_64")]
            if cfg!(miri) {
                None
            } else {
                super::super::platform::Avx512::detect().map(OneState::Avx512)
            },
        ];
        for rounds in [Rounds::Turbo12, Rounds::Keccak24] {
            for seed in 1..SEEDS {
                let start = test_state(seed);
                let want = permuted(start, rounds);
                let mut dispatched = start;
                p1600(&mut dispatched, rounds);
                assert_eq!(dispatched, want, "p1600, {rounds:?}, seed {seed}");
                for kernel in kernels.into_iter().flatten() {
                    let mut ours = start;
                    kernel.permute(&mut ours, rounds);
                    assert_eq!(ours, want, "{kernel:?}, {rounds:?}, seed {seed}");
                }
            }
        }
    }

    #[test]
    fn the_portable_kernel_absorbs_whole_blocks_like_the_keccak_crate() {
        let data: Vec<u8> = (0..3 * 168 + 5).map(|k| (k * 13 + 1) as u8).collect();
        for (rate, rounds) in [
            (168, Rounds::Turbo12),
            (136, Rounds::Keccak24),
            (72, Rounds::Keccak24),
        ] {
            let lens = [0, 7, rate - 1, rate, rate + 1, 2 * rate + 3, 3 * rate];
            // Under Miri, where a permutation takes long, two of them.
            for len in lens
                .into_iter()
                .filter(|&len| !cfg!(miri) || len == 7 || len == rate + 1)
            {
                let mut ours = test_state(len as u64 + 1);
                let mut want = ours;
                let left = OneState::Portable.absorb_blocks(&mut ours, &data[..len], rate, rounds);
                assert_eq!(left, len % rate, "rate {rate}, len {len}");
                absorb_runs_one_by_one(
                    std::slice::from_mut(&mut want),
                    &data[..len - len % rate],
                    0,
                    len - len % rate,
                    rate,
                    rounds,
                );
                assert_eq!(ours, want, "rate {rate}, len {len}");
            }
        }
    }

    #[test]
    fn the_shared_rounds_match_the_keccak_crate() {
        for seed in 1..SEEDS {
            let start = test_state(seed);
            let (mut ours, mut wrapped) = (start, start);
            p1600_by_rows(&mut ours, Rounds::Keccak24);
            p1600(&mut wrapped, Rounds::Keccak24);
            assert_eq!(
                ours,
                permuted(start, Rounds::Keccak24),
                "24 rounds, seed {seed}"
            );
            assert_eq!(wrapped, ours, "24 rounds, seed {seed}");
        }
        let mut zero = [0u64; 25];
        p1600_by_rows(&mut zero, Rounds::Keccak24);
        assert_eq!(
            zero[0], 0xF1258F7940E1DDE7,
            "the keccak crate's known answer"
        );
    }

    #[test]
    fn twelve_rounds_are_the_last_twelve_and_match_the_keccak_crate() {
        assert_eq!(
            (Rounds::Keccak24.count(), Rounds::Keccak24.first()),
            (24, 0)
        );
        assert_eq!((Rounds::Turbo12.count(), Rounds::Turbo12.first()), (12, 12));
        for seed in 1..SEEDS {
            let start = test_state(seed);
            let (mut ours, mut wrapped) = (start, start);
            p1600_by_rows(&mut ours, Rounds::Turbo12);
            p1600(&mut wrapped, Rounds::Turbo12);
            assert_eq!(
                ours,
                permuted(start, Rounds::Turbo12),
                "12 rounds, seed {seed}"
            );
            assert_eq!(wrapped, ours, "12 rounds, seed {seed}");
            assert_ne!(
                ours,
                permuted(start, Rounds::Keccak24),
                "12 rounds differ from 24"
            );
        }
        // Independent of the keccak crate: RFC 9861's first TurboSHAKE128
        // vector (M empty, D = 0x1F, 32 bytes) is one padded block, so one
        // permutation; it holds only if the rounds are the last twelve.
        let mut state = [0u64; 25];
        state[0] ^= 0x1F;
        state[168 / 8 - 1] ^= 1 << 63;
        p1600_by_rows(&mut state, Rounds::Turbo12);
        let out: Vec<u8> = state[..4].iter().flat_map(|w| w.to_le_bytes()).collect();
        assert_eq!(
            hex::encode(out),
            "1e415f1c5983aff2169217277d17bb538cd945a397ddec541f1ce41af2c1b74c"
        );
    }
}
