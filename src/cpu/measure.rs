//! Measurements of the CPU's Keccak kernels themselves, with nothing around
//! them (no loads of input, no padding, no states in memory): the ceiling of
//! every hash the CPU backend computes, a permutation per block. Also the
//! permutation of one state and the sponge around it, on which a final
//! node's absorb of chaining values runs alone (decision 0029). Built only
//! with the `measure` feature, for `benches/permutations.rs`: no part of
//! the library's API.

use std::hint::black_box;
use std::time::{Duration, Instant};

use super::CpuPath;
use super::fast_sponge::Fast;
#[cfg(any(
    target_arch = "x86_64",
    all(target_arch = "aarch64", target_endian = "little")
))]
use super::platform::LaneKernel;
use super::platform::{Platform, with_kernel};
use crate::error::HashError;
use crate::params::Algorithm;
use crate::sponge::{Rounds, Sponge, with_sponge};
use crate::standard::sponge::ByteSponge;

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
/// the stack: the eight-lane AVX-512 permutation of the lane kernels, the
/// four-lane AVX2 one, the two-lane SHA3 one (aarch64, `Auto` where the
/// CPU has SHA3), or on the portable path the portable one-state
/// permutation (the portable leaves use OpenSSL's assembly one on x86-64).
/// An error if this CPU lacks what `path` needs.
pub fn permutations(path: CpuPath, calls: u64) -> Result<Permuted, HashError> {
    let rounds = Rounds::Keccak24;
    let platform = Platform::new(path)?;
    let start = Instant::now();
    let width = with_kernel!(
        platform.node_kernel(),
        |kernel, W| {
            let mut group = [[0u64; W]; 25];
            for _ in 0..calls {
                kernel.permute(black_box(&mut group), rounds);
            }
            W as u64
        },
        || {
            let mut state = [0u64; 25];
            let one_state = platform.one_state();
            for _ in 0..calls {
                one_state.permute(black_box(&mut state), rounds);
            }
            1
        }
    );
    Ok(Permuted {
        width,
        states: calls * width,
        elapsed: start.elapsed(),
    })
}

/// A permutation of one state to time: the kernels of decision 0029
/// (docs/decisions/0029-one-state-keccak-avx512.md) and what they replaced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OneStateKernel {
    /// The `keccak` crate's portable code: what every one-state sponge
    /// permuted with before decision 0029.
    KeccakCrate,
    /// OpenSSL's assembly through `sha3-asm` (`fast_sponge`'s on x86-64,
    /// for plain SHA-3 and SHAKE): Keccak-f\[1600\] only.
    OpensslAsm,
    /// The kernel a CPU path runs (`Platform::one_state`): on `portable`
    /// (and `avx2`) the lane-complemented scalar code, on `avx512` the
    /// state in AVX-512 registers, on `auto` the best of these.
    Path(CpuPath),
}

impl OneStateKernel {
    /// A short name for tables.
    pub fn name(self) -> String {
        match self {
            OneStateKernel::KeccakCrate => "keccak crate (before)".to_string(),
            OneStateKernel::OpensslAsm => "OpenSSL asm (fast_sponge)".to_string(),
            OneStateKernel::Path(path) => format!("{path} one-state kernel"),
        }
    }
}

/// Keccak-p[1600, `rounds`] (12 or 24) on one state, `calls` times, with
/// `kernel`: `None` where this CPU or build lacks the kernel, or the kernel
/// lacks the round count (the assembly runs 24 only).
pub fn one_state_permutations(
    kernel: OneStateKernel,
    rounds: usize,
    calls: u64,
) -> Option<Permuted> {
    let rounds = rounds_of(rounds)?;
    let mut state = [0u64; 25];
    let start = Instant::now();
    match kernel {
        OneStateKernel::KeccakCrate => {
            for _ in 0..calls {
                keccak_crate(black_box(&mut state), rounds);
            }
        }
        OneStateKernel::OpensslAsm => {
            let zeros = [0u8; 136];
            if !openssl_asm_runs(rounds) {
                return None;
            }
            for _ in 0..calls {
                openssl_asm_absorb(black_box(&mut state), &zeros, 136);
            }
        }
        OneStateKernel::Path(path) => {
            let one_state = Platform::new(path).ok()?.one_state();
            for _ in 0..calls {
                one_state.permute(black_box(&mut state), rounds);
            }
        }
    }
    Some(Permuted {
        width: 1,
        states: calls,
        elapsed: start.elapsed(),
    })
}

/// A sponge of `rate` bytes and `rounds` (12 or 24) rounds on `kernel`
/// absorbing `data` handed over in pieces of `piece` bytes, then padded
/// and squeezed for 32 bytes: the time it took. The final node of KT128
/// over 8 GiB is this at rate 168 and 12 rounds over 32 MiB of 32-byte
/// chaining values. `None` where the kernel is missing, as for
/// [`one_state_permutations`] (the assembly's sponge: 24 rounds at a FIPS
/// 202 rate).
pub fn sponge_absorb(
    kernel: OneStateKernel,
    rate: usize,
    rounds: usize,
    data: &[u8],
    piece: usize,
) -> Option<Duration> {
    let rounds = rounds_of(rounds)?;
    let mut out = [0u8; 32];
    let start = Instant::now();
    match kernel {
        OneStateKernel::KeccakCrate => {
            let mut sponge = BeforeSponge::new(rate, rounds);
            data.chunks(piece).for_each(|p| sponge.absorb(black_box(p)));
            sponge.finish(0x06, &mut out);
        }
        OneStateKernel::OpensslAsm => {
            let algorithm = Algorithm::ALL.into_iter().find(|a| a.rate() == rate)?;
            if !openssl_asm_runs(rounds) {
                return None;
            }
            with_sponge!(algorithm, S => {
                let mut sponge = Fast::<S>::default();
                data.chunks(piece).for_each(|p| sponge.absorb(black_box(p)));
                sponge.squeeze_into(&mut out[..algorithm.chaining_len().min(32)]);
            })
        }
        OneStateKernel::Path(path) => {
            let one_state = Platform::new(path).ok()?.one_state();
            let mut sponge = ByteSponge::on(one_state, rate, rounds);
            data.chunks(piece).for_each(|p| sponge.absorb(black_box(p)));
            sponge.finish(0x06, &mut out);
        }
    }
    black_box(out);
    Some(start.elapsed())
}

fn rounds_of(count: usize) -> Option<Rounds> {
    [Rounds::Turbo12, Rounds::Keccak24]
        .into_iter()
        .find(|r| r.count() == count)
}

fn keccak_crate(state: &mut [u64; 25], rounds: Rounds) {
    let keccak = keccak::Keccak::new();
    match rounds {
        Rounds::Keccak24 => keccak.with_p1600::<24>(|p| p(state)),
        Rounds::Turbo12 => keccak.with_p1600::<12>(|p| p(state)),
    }
}

/// Whether the assembly runs `rounds` here: Keccak-f\[1600\] on x86-64.
fn openssl_asm_runs(rounds: Rounds) -> bool {
    cfg!(all(target_arch = "x86_64", not(target_vendor = "apple"))) && rounds == Rounds::Keccak24
}

/// The assembly's absorb of whole `rate`-byte blocks of `data`.
fn openssl_asm_absorb(state: &mut [u64; 25], data: &[u8], rate: usize) {
    #[cfg(all(target_arch = "x86_64", not(target_vendor = "apple")))]
    sha3_asm::sha3_absorb(state, data, rate);
    #[cfg(not(all(target_arch = "x86_64", not(target_vendor = "apple"))))]
    unreachable!(
        "the assembly is x86-64's ({state:?}, {}, {rate})",
        data.len()
    );
}

/// The one-state sponge as it was before decision 0029 (commit fad2cd8's
/// `ByteSponge`): whole blocks a word at a time, other bytes one by one,
/// the `keccak` crate's permutation.
struct BeforeSponge {
    state: [u64; 25],
    pos: usize,
    rate: usize,
    rounds: Rounds,
}

impl BeforeSponge {
    fn new(rate: usize, rounds: Rounds) -> Self {
        BeforeSponge {
            state: [0; 25],
            pos: 0,
            rate,
            rounds,
        }
    }

    fn absorb(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            if self.pos == 0 && data.len() >= self.rate {
                let (block, rest) = data.split_at(self.rate);
                for (word, bytes) in self.state.iter_mut().zip(block.chunks_exact(8)) {
                    *word ^= u64::from_le_bytes(bytes.try_into().expect("8 bytes"));
                }
                keccak_crate(&mut self.state, self.rounds);
                data = rest;
                continue;
            }
            let take = (self.rate - self.pos).min(data.len());
            for (k, &byte) in data[..take].iter().enumerate() {
                self.xor_byte(self.pos + k, byte);
            }
            self.pos += take;
            data = &data[take..];
            if self.pos == self.rate {
                keccak_crate(&mut self.state, self.rounds);
                self.pos = 0;
            }
        }
    }

    fn xor_byte(&mut self, at: usize, byte: u8) {
        self.state[at / 8] ^= u64::from(byte) << (8 * (at % 8));
    }

    fn finish(mut self, domain: u8, out: &mut [u8]) {
        self.xor_byte(self.pos, domain);
        self.xor_byte(self.rate - 1, 0x80);
        keccak_crate(&mut self.state, self.rounds);
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = (self.state[i / 8] >> (8 * (i % 8))) as u8;
        }
    }
}
