//! Keccak-f[1600]'s constants, stated once for every permutation of the CPU
//! backend, and the scalar permutation.

/// The round constants of iota, round 0 first.
pub const RC: [u64; 24] = [
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

/// Rho and pi together: calls `$step!(from, to, rot)` for each of the 24 lanes
/// that move. Lane (x, y) (index x + 5y) is rotated left by its rho offset
/// and lands at (y, 2x + 3y mod 5). Lane 0 stays where it is, unrotated.
/// The arguments are plain literals, so that `$step` can match on them.
macro_rules! for_each_rho_pi {
    ($step:ident) => {
        $step!(1, 10, 1);
        $step!(2, 20, 62);
        $step!(3, 5, 28);
        $step!(4, 15, 27);
        $step!(5, 16, 36);
        $step!(6, 1, 44);
        $step!(7, 11, 6);
        $step!(8, 21, 55);
        $step!(9, 6, 20);
        $step!(10, 7, 3);
        $step!(11, 17, 10);
        $step!(12, 2, 43);
        $step!(13, 12, 25);
        $step!(14, 22, 39);
        $step!(15, 23, 41);
        $step!(16, 8, 45);
        $step!(17, 18, 15);
        $step!(18, 3, 21);
        $step!(19, 13, 8);
        $step!(20, 14, 18);
        $step!(21, 24, 2);
        $step!(22, 9, 61);
        $step!(23, 19, 56);
        $step!(24, 4, 14);
    };
}
pub(crate) use for_each_rho_pi;

/// Keccak-f[1600] on one state.
#[inline]
pub fn f1600(state: &mut [u64; 25]) {
    keccak::Keccak::new().with_f1600(|f| f(state));
}

/// A state with random-looking lanes, for the permutation tests.
#[cfg(test)]
pub fn test_state(seed: u64) -> [u64; 25] {
    let mut x = seed | 1;
    std::array::from_fn(|_| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    })
}
