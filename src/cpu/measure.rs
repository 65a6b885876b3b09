//! Measurements of the CPU's Keccak kernels themselves, with nothing around
//! them (no loads of input, no padding, no states in memory): the ceiling of
//! every hash the CPU backend computes, a permutation per block. Built only
//! with the `measure` feature, for `benches/permutations.rs`: no part of
//! the library's API.

use std::hint::black_box;
use std::time::{Duration, Instant};

use super::CpuPath;
use super::keccak::p1600;
use super::platform::Platform;
use crate::error::HashError;
use crate::sponge::Rounds;

/// What [`permutations`] ran.
#[derive(Clone, Copy, Debug)]
pub struct Permuted {
    /// States permuted side by side by one call of the kernel: 8 with
    /// AVX-512, 4 with AVX2, 1 on the portable path.
    pub width: u64,
    /// States permuted in all: `width` times the calls.
    pub states: u64,
    pub elapsed: Duration,
}

/// Calls `path`'s widest Keccak-f[1600] kernel (24 rounds, SHA-3's)
/// `calls` times on the calling thread, on states held in registers and
/// the stack: the eight-lane AVX-512 kernel of the lane engines, the
/// four-lane AVX2 one, or on the portable path the `keccak` crate's scalar
/// permutation (the portable leaves use OpenSSL's assembly one on x86-64).
/// An error if this CPU lacks what `path` needs.
pub fn permutations(path: CpuPath, calls: u64) -> Result<Permuted, HashError> {
    let rounds = Rounds::Keccak24;
    let platform = Platform::new(path)?;
    let start = Instant::now();
    let width = match platform {
        #[cfg(target_arch = "x86_64")]
        Platform::Avx512(avx512) => {
            let mut group = [[0u64; 8]; 25];
            for _ in 0..calls {
                super::keccak_x8::permute(avx512, black_box(&mut group), rounds);
            }
            8
        }
        #[cfg(target_arch = "x86_64")]
        Platform::Avx2(avx2) => {
            let mut group = [[0u64; 4]; 25];
            for _ in 0..calls {
                super::keccak_x4::permute(avx2, black_box(&mut group), rounds);
            }
            4
        }
        Platform::Portable => {
            let mut state = [0u64; 25];
            for _ in 0..calls {
                p1600(black_box(&mut state), rounds);
            }
            1
        }
    };
    Ok(Permuted {
        width,
        states: calls * width,
        elapsed: start.elapsed(),
    })
}
