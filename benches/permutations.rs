//! Keccak-f[1600] permutations a second, with nothing around them: each CPU
//! path's widest kernel (eight states at once with AVX-512, four with AVX2,
//! two with the ARMv8.2 SHA3 instructions on aarch64, one portable) on one
//! thread, then on every core at once (where the cores' clocks are lower).
//! The ceiling of the CPU backend: every hash costs at least one
//! permutation per rate block it absorbs, so an input that costs P
//! permutations (`scripts/bench-lists.py` counts them from the spec) takes
//! at least P / (cores × the all-core rate per thread).
//!
//!     cargo bench --features measure --bench permutations
//!
//! Then the permutation of one state, which every sponge that runs alone
//! waits on (decision 0029): each kernel at 12 and 24 rounds, and the
//! final node of KT128 over 8 GiB, 32 MiB of chaining values through one
//! TurboSHAKE128 sponge, before (the `keccak` crate) and after; and plain
//! SHA3-256 at one state, where `fast_sponge` runs OpenSSL's assembly.
//! These rows are interleaved (each kernel once per turn) and give the
//! median of the turns.
//!
//! TREEHASH_BENCH_SECONDS sets the time per row (default 0.5).

use std::time::{Duration, Instant};

use treehash::CpuPath;

mod common;
use treehash::cpu::measure::{
    OneStateKernel, Permuted, one_state_permutations, permutations, sponge_absorb,
};

/// Turns of the interleaved rows: the median of an odd count.
const TURNS: usize = 11;

/// Runs `path`'s kernel on `threads` threads at once for about `seconds`:
/// the states permuted a second on each thread, or `None` where this CPU
/// lacks the path.
fn rate(path: CpuPath, threads: usize, seconds: f64) -> Option<(u64, f64)> {
    // Calls for about `seconds`, from a short run.
    let probe = permutations(path, 1000).ok()?;
    let per_call = probe.elapsed.as_secs_f64().max(1e-9) / 1000.0;
    let calls = ((seconds / per_call) as u64).max(1);
    let runs: Vec<Permuted> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| s.spawn(move || permutations(path, calls)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a measuring thread panicked"))
            .collect::<Result<_, _>>()
    })
    .ok()?;
    let slowest = runs
        .iter()
        .map(|r| r.elapsed)
        .max()
        .unwrap_or(Duration::ZERO);
    let states: u64 = runs.iter().map(|r| r.states).sum();
    let per_thread = states as f64 / threads as f64 / slowest.as_secs_f64();
    Some((runs[0].width, per_thread))
}

fn main() {
    let seconds: f64 = std::env::var("TREEHASH_BENCH_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.5);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let start = Instant::now();
    println!("# Keccak-f[1600] permutations, {cores} threads available\n");
    println!(
        "| kernel | threads at once | M states/s per thread | ns per state | \
         GB/s per thread at one 136-byte block per state |"
    );
    println!("|---|---:|---:|---:|---:|");
    for (name, path) in common::kernels() {
        for threads in [1, cores] {
            let Some((width, per_thread)) = path.and_then(|path| rate(path, threads, seconds))
            else {
                println!("| {name}: not on this CPU | | | | |");
                break;
            };
            println!(
                "| {name} ({width} states a call) | {threads} | {:.2} | {:.1} | {:.2} |",
                per_thread / 1e6,
                1e9 / per_thread,
                per_thread * 136.0 / 1e9
            );
        }
    }
    one_state(seconds);
    eprintln!("({:.1} s)", start.elapsed().as_secs_f64());
}

/// The one-state kernels, the baseline first.
fn kernels() -> Vec<OneStateKernel> {
    vec![
        OneStateKernel::KeccakCrate,
        OneStateKernel::OpensslAsm,
        OneStateKernel::Path(CpuPath::Portable),
        OneStateKernel::Path(CpuPath::Avx512),
        OneStateKernel::Path(CpuPath::Auto),
    ]
}

/// The median of `values`.
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Runs `time` (seconds for one turn of a kernel, `None` where the kernel
/// is missing) for every kernel, `TURNS` times interleaved: each kernel's
/// median, or `None`.
fn interleaved(
    kernels: &[OneStateKernel],
    mut time: impl FnMut(OneStateKernel) -> Option<f64>,
) -> Vec<Option<f64>> {
    let mut turns: Vec<Option<Vec<f64>>> = kernels.iter().map(|_| Some(Vec::new())).collect();
    for _ in 0..TURNS {
        for (kernel, times) in kernels.iter().zip(&mut turns) {
            if let Some(list) = times {
                match time(*kernel) {
                    Some(t) => list.push(t),
                    None => *times = None,
                }
            }
        }
    }
    turns.into_iter().map(|t| t.map(median)).collect()
}

fn one_state(seconds: f64) {
    let kernels = kernels();
    println!("\n# Keccak-p[1600, n_r] on one state, median of {TURNS} interleaved turns\n");
    println!(
        "| kernel | rounds | ns per permutation | M permutations/s | \
         GB/s at one block per permutation | vs keccak crate |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    for (rounds, rate) in [(12, 168.0), (24, 136.0)] {
        // Calls for about `seconds` across the turns, from a short run.
        let probe = one_state_permutations(OneStateKernel::KeccakCrate, rounds, 10_000)
            .expect("the keccak crate runs everywhere");
        let per_call = probe.elapsed.as_secs_f64().max(1e-9) / 10_000.0;
        let calls = ((seconds / TURNS as f64 / per_call) as u64).max(100);
        let ns = interleaved(&kernels, |kernel| {
            let run = one_state_permutations(kernel, rounds, calls)?;
            Some(run.elapsed.as_secs_f64() * 1e9 / run.states as f64)
        });
        let base = ns[0].expect("the keccak crate runs everywhere");
        for (kernel, ns) in kernels.iter().zip(ns) {
            match ns {
                Some(ns) => println!(
                    "| {} | {rounds} | {ns:.1} | {:.2} | {:.2} | {:.2} × |",
                    kernel.name(),
                    1e3 / ns,
                    rate / ns,
                    base / ns
                ),
                None => println!("| {}: not here | {rounds} | | | | |", kernel.name()),
            }
        }
    }

    // The final node of KT128 over 8 GiB: one chaining value of 32 bytes
    // per 8 KiB chunk, handed over as a piece of 32 MiB of input yields
    // them (128 KiB).
    let values: Vec<u8> = (0..32u32 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let piece = 128 << 10;
    println!(
        "\n# KT128's final node over 8 GiB: {} MiB of chaining values through one \
         TurboSHAKE128 sponge (rate 168, 12 rounds), in pieces of {} KiB, median of {TURNS} \
         interleaved turns\n",
        values.len() >> 20,
        piece >> 10
    );
    sponge_rows(&kernels, 168, 12, &values, piece);

    // Plain SHA3-256 (rate 136, 24 rounds) at one state: `fast_sponge`
    // runs OpenSSL's assembly there.
    let message = &values[..16 << 20];
    println!(
        "\n# SHA3-256 at one state: {} MiB through one sponge (rate 136, 24 rounds), \
         in pieces of {} KiB, median of {TURNS} interleaved turns\n",
        message.len() >> 20,
        piece >> 10
    );
    sponge_rows(&kernels, 136, 24, message, piece);
}

/// The table of each kernel's sponge absorbing `data` in pieces.
fn sponge_rows(kernels: &[OneStateKernel], rate: usize, rounds: usize, data: &[u8], piece: usize) {
    println!("| sponge | GB/s | ms | vs keccak crate |");
    println!("|---|---:|---:|---:|");
    let ms = interleaved(kernels, |kernel| {
        Some(sponge_absorb(kernel, rate, rounds, data, piece)?.as_secs_f64() * 1e3)
    });
    let base = ms[0].expect("the keccak crate runs everywhere");
    for (kernel, ms) in kernels.iter().zip(ms) {
        match ms {
            Some(ms) => println!(
                "| {} | {:.3} | {ms:.1} | {:.2} × |",
                kernel.name(),
                data.len() as f64 / ms / 1e6,
                base / ms
            ),
            None => println!("| {}: not here | | | |", kernel.name()),
        }
    }
}
