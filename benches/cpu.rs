//! CPU benchmark: the fast CPU backend (its AVX-512 eight-lane path where the
//! CPU has one, and its portable path) against single-threaded plain SHA3-256
//! (the `sha3` crate) and against the reference, on the same in-memory data.
//! Prints a markdown table (docs/PERFORMANCE.md).
//!
//! TREEHASH_BENCH_MIB sets the data size (default 512); the reference runs
//! on a quarter of it (it holds every leaf in memory).

use std::time::Instant;

use sha3::Digest;
use treehash::{Algorithm, BackendChoice, CpuPath, Hasher, HasherOptions, TreeParams, reference};

const GB: f64 = 1e9;

/// Best of `reps` runs of `f` on `bytes` bytes, in bytes per second.
fn rate(bytes: usize, reps: usize, mut f: impl FnMut()) -> f64 {
    (0..reps)
        .map(|_| {
            let start = Instant::now();
            f();
            bytes as f64 / start.elapsed().as_secs_f64()
        })
        .fold(0.0, f64::max)
}

fn cpu(threads: Option<usize>, cpu_path: CpuPath) -> Hasher {
    Hasher::new(HasherOptions {
        backend: BackendChoice::Cpu,
        threads,
        cpu_path,
        ..Default::default()
    })
    .unwrap()
}

fn main() {
    let mib: usize = std::env::var("TREEHASH_BENCH_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(512);
    let data: Vec<u8> = (0..mib << 20)
        .map(|i: usize| (i.wrapping_mul(0x9e37_79b9) >> 11) as u8)
        .collect();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let all = cpu(None, CpuPath::Auto);
    let one = cpu(Some(1), CpuPath::Auto);
    let portable = cpu(None, CpuPath::Portable);

    let plain = rate(data.len(), 3, || {
        std::hint::black_box(sha3::Sha3_256::digest(&data));
    });
    println!("# CPU benchmark, {mib} MiB in memory, {cores} cores\n");
    println!(
        "single-thread plain SHA3-256 (sha3 crate): {:.3} GB/s\n",
        plain / GB
    );
    println!("| what | threads | GB/s | × plain | × plain / threads |");
    println!("|---|---:|---:|---:|---:|");
    let row = |what: &str, threads: usize, r: f64| {
        println!(
            "| {what} | {threads} | {:.3} | {:.2} | {:.2} |",
            r / GB,
            r / plain,
            r / plain / threads as f64
        );
    };
    row("plain SHA3-256 (sha3 crate)", 1, plain);
    for height in [0u32, 2, 4, 6, 8, 10] {
        let params = TreeParams::new(Algorithm::Sha3_256, height, 4).unwrap();
        let r = rate(data.len(), 3, || {
            std::hint::black_box(all.hash_bytes(&params, &data).unwrap());
        });
        row(&format!("fast CPU backend, H={height}, D=4"), cores, r);
    }
    let params = TreeParams::new(Algorithm::Sha3_256, 8, 4).unwrap();
    for height in [6u32, 8] {
        let params = TreeParams::new(Algorithm::Sha3_256, height, 4).unwrap();
        let r = rate(data.len(), 3, || {
            std::hint::black_box(portable.hash_bytes(&params, &data).unwrap());
        });
        row(
            &format!("portable path (no AVX-512), H={height}, D=4"),
            cores,
            r,
        );
    }
    let mut threads = 1;
    while threads < cores {
        let h = if threads == 1 {
            &one
        } else {
            &cpu(Some(threads), CpuPath::Auto)
        };
        let r = rate(data.len(), 2, || {
            std::hint::black_box(h.hash_bytes(&params, &data).unwrap());
        });
        row("fast CPU backend, H=8, D=4", threads, r);
        threads *= 2;
    }
    // The ceiling for this machine and this Keccak: one plain SHA3-256 stream
    // per core over disjoint slices, no tree at all.
    let slice = data.len().div_ceil(cores);
    let r = rate(data.len(), 3, || {
        use rayon::prelude::*;
        let digests: Vec<_> = data.par_chunks(slice).map(sha3::Sha3_256::digest).collect();
        std::hint::black_box(digests);
    });
    row(
        "ceiling: independent plain SHA3-256 streams, one per core",
        cores,
        r,
    );
    let part = &data[..data.len() / 4];
    let r = rate(part.len(), 1, || {
        std::hint::black_box(reference::tree_hash(&params, part));
    });
    row("reference, H=8, D=4", 1, r);
}
