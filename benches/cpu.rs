//! CPU benchmark, one run, same in-memory data for every row: each CPU kernel
//! forced (portable, AVX2, AVX-512 where the CPU has them; on aarch64 the
//! two-lane SHA3 kernel where the CPU has SHA3) on one thread and on all, at H = 8, 6 and 4; the host's memory-read ceiling; height 0 (plain
//! SHA3-256) against the `sha3` crate; the reference; the chunk kernels of
//! the standard parallel hashes (KT128/256 leaves, ParallelHash blocks) on
//! one thread per path, with the `k12` crate's KT128 beside them, and their
//! permutation rate. Prints a markdown table (docs/PERFORMANCE.md).
//!
//! TREEHASH_BENCH_MIB sets the data size (default 512); the reference runs
//! on a quarter of it (it holds every leaf in memory).

use std::time::Instant;

use rayon::prelude::*;
use sha3::Digest;
use treehash::cpu::chunks::chaining_values;
use treehash::sponge::SpongeSpec;
use treehash::standard::Standard;
use treehash::{Algorithm, BackendChoice, CpuPath, Hasher, HasherOptions, TreeParams};
use treehash_reference::{Node, Tree};

mod common;
use common::kernels;

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

/// A CPU hasher on `threads` threads forced onto `path`, or `None` when this
/// CPU lacks it.
fn cpu(threads: Option<usize>, cpu_path: CpuPath) -> Option<Hasher> {
    Hasher::new(
        HasherOptions::default()
            .with_backend(BackendChoice::Cpu)
            .with_threads(threads)
            .with_cpu_path(cpu_path),
    )
    .ok()
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
    let sha3_256 = |height| TreeParams::new(Algorithm::Sha3_256, height, 4).unwrap();

    let plain = rate(data.len(), 3, || {
        std::hint::black_box(sha3::Sha3_256::digest(&data));
    });
    println!("# CPU benchmark, {mib} MiB in memory, {cores} threads\n");
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
    let one = cpu(Some(1), CpuPath::Auto).unwrap();
    let r = rate(data.len(), 3, || {
        std::hint::black_box(one.hash_bytes(sha3_256(0), &data).unwrap());
    });
    row("treehash H=0 (plain SHA3-256)", 1, r);

    // The host's memory-read ceiling: every thread summing its share as u64s.
    let r = rate(data.len(), 3, || {
        let sum: u64 = data
            .par_chunks(1 << 20)
            .map(|chunk| {
                chunk
                    .chunks_exact(8)
                    .map(|w| u64::from_le_bytes(w.try_into().unwrap()))
                    .fold(0u64, u64::wrapping_add)
            })
            .reduce(|| 0, u64::wrapping_add);
        std::hint::black_box(sum);
    });
    row("ceiling: memory read (u64 sums, all threads)", cores, r);
    // One sponge per core with nothing shared: the ceiling of scalar Keccak.
    let slice = data.len().div_ceil(cores);
    let r = rate(data.len(), 3, || {
        let digests: Vec<_> = data.par_chunks(slice).map(sha3::Sha3_256::digest).collect();
        std::hint::black_box(digests);
    });
    row(
        "ceiling: independent plain SHA3-256 hashes, one per thread",
        cores,
        r,
    );

    for (name, path) in kernels() {
        for threads in [1, cores] {
            let Some(hasher) = path.and_then(|path| cpu(Some(threads), path)) else {
                println!("| {name} path: not on this CPU | {threads} | | | |");
                continue;
            };
            for height in [8u32, 6, 4] {
                let params = sha3_256(height);
                let r = rate(data.len(), 3, || {
                    std::hint::black_box(hasher.hash_bytes(&params, &data).unwrap());
                });
                row(&format!("{name} path, H={height}, D=4"), threads, r);
            }
        }
    }

    let part = &data[..data.len() / 4];
    // The tree of `sha3_256(8)`, as the reference crate describes it.
    let reference_tree = Tree {
        node: Node::Sha3_256,
        height: 8,
        degree: 4,
        block_size: Node::Sha3_256.rate(),
        prefix: &[],
        output_len: Node::Sha3_256.chaining_len(),
    };
    let r = rate(part.len(), 1, || {
        std::hint::black_box(treehash_reference::tree_hash(&reference_tree, part));
    });
    row("reference, H=8, D=4", 1, r);

    chunk_kernels(&data, &row);
}

/// The chunk kernels (`treehash::cpu::chunks`) on one thread: 8192-byte
/// chunks of the standard modes on each kernel (the portable one on a quarter
/// of the data), the `k12` crate's whole KT128 beside them; then the
/// permutations per second, on empty chunks (one padded block each).
fn chunk_kernels(data: &[u8], row: &dyn Fn(&str, usize, f64)) {
    use k12::digest::{ExtendableOutput, Update, XofReader};

    const CHUNK: usize = 8192;
    let specs = Standard::ALL.into_iter().filter_map(|s| {
        let spec = s.chunk_spec()?;
        let name = format!(
            "{} chunks ({} rounds, rate {})",
            s.standard_name(),
            spec.rounds().count(),
            spec.rate()
        );
        Some((name, spec))
    });
    let specs: Vec<(String, SpongeSpec)> = specs.collect();
    let kernels = kernels();
    for (name, spec) in &specs {
        for &(kernel, path) in &kernels {
            let Some(path) = path else {
                println!("| {name}, {kernel}: not on this CPU | 1 | | | |");
                continue;
            };
            let part = if path == CpuPath::Portable {
                &data[..data.len() / 4]
            } else {
                data
            };
            let count = part.len() / CHUNK;
            let chunks = &part[..count * CHUNK];
            let mut out = vec![0u8; count * spec.output_len()];
            if chaining_values(path, spec, chunks, CHUNK, &mut out).is_err() {
                println!("| {name}, {kernel}: not on this CPU | 1 | | | |");
                continue;
            }
            let r = rate(chunks.len(), 3, || {
                chaining_values(path, spec, chunks, CHUNK, &mut out).unwrap();
                std::hint::black_box(&out);
            });
            row(
                &format!("chunk outputs: {name}, {CHUNK}-byte chunks, {kernel}"),
                1,
                r,
            );
        }
    }
    let part = &data[..data.len() / 4];
    let r = rate(part.len(), 3, || {
        let mut kt = k12::Kt128::default();
        kt.update(part);
        let mut digest = [0u8; 32];
        kt.finalize_xof().read(&mut digest);
        std::hint::black_box(digest);
    });
    row("KT128, whole message (k12 crate, RustCrypto)", 1, r);

    println!("\n| permutations on one thread (empty chunks) | path | M states/s |");
    println!("|---|---|---:|");
    const EMPTY: usize = 1 << 20;
    for (name, spec) in [&specs[0], &specs[2]] {
        for &(kernel, path) in &kernels {
            let Some(path) = path else { continue };
            let mut out = vec![0u8; EMPTY * spec.output_len()];
            if chaining_values(path, spec, &[], 0, &mut out).is_err() {
                continue;
            }
            let r = rate(EMPTY, 3, || {
                chaining_values(path, spec, &[], 0, &mut out).unwrap();
                std::hint::black_box(&out);
            });
            println!("| {name} | {kernel} | {:.1} |", r / 1e6);
        }
    }
}
