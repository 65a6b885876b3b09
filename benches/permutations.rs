//! Keccak-f[1600] permutations a second, with nothing around them: each CPU
//! path's widest kernel (eight states at once with AVX-512, four with AVX2,
//! one portable) on one thread, then on every core at once (where the
//! cores' clocks are lower). The ceiling of the CPU backend: every hash
//! costs at least one permutation per rate block it absorbs, so an input
//! that costs P permutations (`scripts/bench-lists.py` counts them from the
//! spec) takes at least P / (cores × the all-core rate per thread).
//!
//!     cargo bench --features measure --bench permutations
//!
//! TREEHASH_BENCH_SECONDS sets the time per row (default 0.5).

use std::time::{Duration, Instant};

use treehash::CpuPath;
use treehash::cpu::measure::{Permuted, permutations};

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
    for path in [CpuPath::Portable, CpuPath::Avx2, CpuPath::Avx512] {
        for threads in [1, cores] {
            let Some((width, per_thread)) = rate(path, threads, seconds) else {
                println!("| {path}: not on this CPU | | | | |");
                break;
            };
            println!(
                "| {path} ({width} states a call) | {threads} | {:.2} | {:.1} | {:.2} |",
                per_thread / 1e6,
                1e9 / per_thread,
                per_thread * 136.0 / 1e9
            );
        }
    }
    eprintln!("({:.1} s)", start.elapsed().as_secs_f64());
}
