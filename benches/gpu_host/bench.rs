//! Where the host side of the GPU pipeline spends its time, on a page-cached
//! file (TREEHASH_BENCH_FILE): faulting in a mapping, pinning it, copying
//! from it, filling pinned buffers by memcpy or by pread, and the staging
//! pipeline without kernels (the host's ceiling for hashing on the GPU).
//! Informs the choice of copy mode and ring (docs/PERFORMANCE.md). Needs a
//! CUDA GPU. Where several are visible it also measures them at once: their
//! pinned copies together, and the staging pipeline on each alone and on all
//! together, and staging by reader threads with small buffers (one GPU, then
//! all). TREEHASH_BENCH_TOGETHER_ONLY=1 runs only that part, on one GPU too;
//! TREEHASH_BENCH_REGISTERED_ONLY=1 only the GPU copying windows of the
//! mapped file straight from the page cache (pinned in place, several threads).

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::time::{Duration, Instant};

use memmap2::{Mmap, MmapOptions};
use rayon::prelude::*;
use treehash::gpu::{GpuBackend, measure};
use treehash::{BackendChoice, Hasher, HasherOptions};

const GB: f64 = 1e9;

fn rate(bytes: usize, d: Duration) -> String {
    format!(
        "{:.1} GB/s ({:.0} ms)",
        bytes as f64 / GB / d.as_secs_f64(),
        d.as_secs_f64() * 1e3
    )
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let s = Instant::now();
    let t = f();
    (t, s.elapsed())
}

fn touch(map: &[u8]) -> u64 {
    map.par_chunks(1 << 20)
        .map(|c| c.iter().step_by(4096).map(|&b| u64::from(b)).sum::<u64>())
        .sum()
}

pub(crate) fn main() {
    let Some(path) = std::env::var_os("TREEHASH_BENCH_FILE") else {
        println!("gpu_host: set TREEHASH_BENCH_FILE");
        return;
    };
    if !treehash::gpu::driver_present() {
        println!("gpu_host: no CUDA driver");
        return;
    }
    // Every visible GPU, started at once.
    let hasher = Hasher::new(HasherOptions::default().with_backend(BackendChoice::Gpu)).unwrap();
    let gpus = hasher.gpus().expect("the GPUs");
    let (gpu, others) = (gpus[0], &gpus[1..]);
    let file = File::open(&path).unwrap();
    let len = file.metadata().unwrap().len() as usize;
    println!(
        "# Host side of the pipeline, {:.2} GB page-cached file, {} threads\n",
        len as f64 / GB,
        rayon::current_num_threads()
    );
    let only_together = std::env::var_os("TREEHASH_BENCH_TOGETHER_ONLY").is_some();
    if std::env::var_os("TREEHASH_BENCH_REGISTERED_ONLY").is_some() {
        registered_windows(gpu, &file, path.as_ref(), len);
        return;
    }
    if !only_together {
        one_gpu(gpu, &file, path.as_ref(), len);
    }
    if !others.is_empty() || only_together {
        together(&gpus, &file, path.as_ref(), len);
    }
}

/// The GPU copying straight from the page cache: windows of a populated
/// mapping pinned, copied and unpinned by several threads at once, against
/// the pinned copy and the staging pipeline of the same run.
fn registered_windows(gpu: &GpuBackend, file: &File, path: &std::path::Path, len: usize) {
    let copy = measure::pinned_copy_rate(gpu, 1 << 30, 10).unwrap();
    println!("- pinned copy, 1 GiB: {:.1} GB/s", copy / GB);
    let staged = (0..3)
        .map(|_| measure::staged_copy_rate(gpu, path, 32 << 20, 3).unwrap())
        .fold(0.0, f64::max);
    println!(
        "- staging pipeline without kernels, 3 × 32 MiB: {:.1} GB/s = {:.2} × (best of 3)",
        staged / GB,
        staged / copy
    );
    // SAFETY: the benchmark's own input file, which nothing writes or
    // truncates while it runs.
    let (map, t_pop) = timed(|| unsafe { MmapOptions::new().populate().map(file) }.unwrap());
    println!("- mmap with MAP_POPULATE: {}", rate(len, t_pop));
    println!("- windows pinned, copied from and unpinned by T threads (best of 3):");
    for window_mib in [8usize, 32, 128] {
        for threads in [1usize, 2, 4, 8] {
            let r = (0..3)
                .map(|_| {
                    measure::registered_windows_copy_rate(gpu, &map, window_mib << 20, threads)
                        .unwrap()
                })
                .fold(0.0, f64::max);
            println!(
                "  - {window_mib} MiB windows, {threads} threads: {:.1} GB/s = {:.2} × the pinned copy",
                r / GB,
                r / copy
            );
        }
    }
}

/// Reads the whole file into `dst` over and over, a mebibyte per task on
/// every thread: the CPU side of staging without any copy to a device.
fn pread_pass(file: &File, dst: &mut [u8], len: usize) -> Duration {
    let ring = dst.len();
    timed(|| {
        for off in (0..len).step_by(ring) {
            let n = ring.min(len - off);
            dst[..n]
                .par_chunks_mut(1 << 20)
                .enumerate()
                .for_each(|(j, d)| {
                    file.read_exact_at(d, (off + j * (1 << 20)) as u64).unwrap();
                });
        }
    })
    .1
}

/// Every thread reading the file `read` bytes at a time into its own small
/// buffer, which stays in its cache: the page cache's read rate, each byte
/// crossing memory once. Best of 3.
fn pread_small(file: &File, len: usize, read: usize) -> Duration {
    let threads = rayon::current_num_threads();
    (0..3)
        .map(|_| {
            timed(|| {
                (0..threads).into_par_iter().for_each(|t| {
                    let mut buf = vec![0u8; read];
                    for at in (t * read..len).step_by(threads * read) {
                        let n = read.min(len - at);
                        file.read_exact_at(&mut buf[..n], at as u64).unwrap();
                    }
                    std::hint::black_box(&buf);
                })
            })
            .1
        })
        .min()
        .unwrap_or_default()
}

/// Staging by reader threads with small buffers of their own
/// ([`measure::reader_staged_copy_rate`]), by transfer and readers per GPU.
fn reader_sweep(gpus: &[&GpuBackend], file: &File, path: &std::path::Path, len: usize) {
    for read in [1usize << 20, 4 << 20] {
        println!(
            "- pread into a small buffer per thread ({} MiB), no device: {}",
            read >> 20,
            rate(len, pread_small(file, len, read))
        );
    }
    println!(
        "- staging by reader threads, each with two small pinned buffers and its own \
         CUDA stream, {} GPU(s) at once, GB/s in all (best of 2):\n",
        gpus.len()
    );
    println!("| transfer | 4 readers per GPU | 8 | 12 | 16 |");
    println!("|---:|---:|---:|---:|---:|");
    for transfer in [1usize << 20, 2 << 20, 4 << 20, 8 << 20] {
        let mut row = format!("| {} MiB |", transfer >> 20);
        for readers in [4, 8, 12, 16] {
            let r = (0..2)
                .map(|_| {
                    measure::reader_staged_copy_rate(gpus, path, transfer, readers)
                        .unwrap()
                        .0
                })
                .fold(0.0, f64::max);
            row += &format!(" {:.1} |", r / GB);
        }
        println!("{row}");
    }
}

/// Several GPUs fed at once: can the host feed each link as fast as it
/// feeds one?
fn together(gpus: &[&GpuBackend], file: &File, path: &std::path::Path, len: usize) {
    let n = gpus.len();
    println!("\n## {n} GPU(s) at once\n");
    let alone: Vec<f64> = gpus
        .iter()
        .map(|gpu| measure::pinned_copy_rate(gpu, 1 << 30, 10).unwrap())
        .collect();
    let both = measure::pinned_copy_rates_together(gpus, 1 << 30, 10).unwrap();
    let list = |rates: &[f64]| {
        rates
            .iter()
            .map(|r| format!("{:.1}", r / GB))
            .collect::<Vec<_>>()
            .join(" + ")
    };
    println!(
        "- pinned copy, 1 GiB, median of 10: each GPU alone {} GB/s; all at once {} = {:.1} GB/s",
        list(&alone),
        list(&both),
        both.iter().sum::<f64>() / GB
    );
    let mut buf = measure::pinned_buffer(gpus[0], 256 << 20, false).unwrap();
    let dst = buf.as_mut_slice().unwrap();
    let best = (0..3)
        .map(|_| pread_pass(file, dst, len))
        .min()
        .unwrap_or_default();
    println!(
        "- pread file -> pinned, all threads, no device: {} (best of 3)",
        rate(len, best)
    );
    let (transfer, slots) = (32 << 20, 3);
    println!(
        "- staging pipeline without kernels, {transfer_mib} MiB transfers, {slots} slots, best of 3:",
        transfer_mib = transfer >> 20
    );
    for (i, gpu) in gpus.iter().enumerate() {
        let r = (0..3)
            .map(|_| measure::staged_copy_rate(gpu, path, transfer, slots).unwrap())
            .fold(0.0, f64::max);
        println!(
            "  - GPU {i} alone, whole file: {:.1} GB/s = {:.2} × its pinned copy",
            r / GB,
            r / alone[i]
        );
    }
    if n > 1 {
        let (total, each) = (0..3)
            .map(|_| measure::staged_copy_rate_together(gpus, path, transfer, slots).unwrap())
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .unwrap();
        println!(
            "  - all {n} at once, a part each: {:.1} GB/s in all (each over its part: {} GB/s)",
            total / GB,
            list(&each)
        );
    }
    println!();
    reader_sweep(&gpus[..1], file, path, len);
    if n > 1 {
        println!();
        reader_sweep(gpus, file, path, len);
    }
}

/// The host side of one GPU's pipeline, step by step.
fn one_gpu(gpu: &GpuBackend, file: &File, path: &std::path::Path, len: usize) {
    // SAFETY (every mapping here): the benchmark's own input file, which
    // nothing writes or truncates while it runs.
    let (map, t_map) = timed(|| unsafe { Mmap::map(file) }.unwrap());
    let (_, t_touch) = timed(|| touch(&map));
    println!(
        "- mmap {:?}; fault in every page (touch, all threads): {}",
        t_map,
        rate(len, t_touch)
    );
    let (_, t_unmap) = timed(|| drop(map));
    println!(
        "- munmap after touching: {:.0} ms",
        t_unmap.as_secs_f64() * 1e3
    );

    // SAFETY: as above.
    let (map, t_pop) = timed(|| unsafe { MmapOptions::new().populate().map(file) }.unwrap());
    println!("- mmap with MAP_POPULATE: {}", rate(len, t_pop));
    let [reg, copy, unreg] = measure::register_copy_unregister(gpu, &map, 64 << 20).unwrap();
    println!(
        "- populated mapping: register {}, copy {}, unregister {:.0} ms",
        rate(len, reg),
        rate(len, copy),
        unreg.as_secs_f64() * 1e3
    );
    let (_, t_unmap) = timed(|| drop(map));
    println!("- munmap: {:.0} ms", t_unmap.as_secs_f64() * 1e3);

    // SAFETY: as above.
    let map = unsafe { Mmap::map(file) }.unwrap();
    let [reg, copy, unreg] = measure::register_copy_unregister(gpu, &map, 64 << 20).unwrap();
    println!(
        "- fresh mapping: register {}, copy {}, unregister {:.0} ms",
        rate(len, reg),
        rate(len, copy),
        unreg.as_secs_f64() * 1e3
    );
    drop(map);

    let ring = 256 << 20;
    for wc in [true, false] {
        let mut buf = measure::pinned_buffer(gpu, ring, wc).unwrap();
        let dst = buf.as_mut_slice().unwrap();
        // SAFETY: as above.
        let map = unsafe { Mmap::map(file) }.unwrap();
        let (_, t) = timed(|| {
            for (i, piece) in map.chunks(ring).enumerate() {
                let _ = i;
                dst[..piece.len()]
                    .par_chunks_mut(1 << 20)
                    .zip(piece.par_chunks(1 << 20))
                    .for_each(|(d, s)| d.copy_from_slice(s));
            }
        });
        let (_, t2) = timed(|| {
            for piece in map.chunks(ring) {
                dst[..piece.len()]
                    .par_chunks_mut(1 << 20)
                    .zip(piece.par_chunks(1 << 20))
                    .for_each(|(d, s)| d.copy_from_slice(s));
            }
        });
        println!(
            "- memcpy mapping -> pinned ({}): first pass (faults) {}, second pass {}",
            if wc { "write-combined" } else { "ordinary" },
            rate(len, t),
            rate(len, t2)
        );
        let t3 = pread_pass(file, dst, len);
        println!(
            "- pread file -> pinned ({}): {}",
            if wc { "write-combined" } else { "ordinary" },
            rate(len, t3)
        );
    }

    println!();
    let copy = measure::pinned_copy_rate(gpu, 1 << 30, 10).unwrap();
    println!(
        "- staging pipeline without kernels (pread into a ring of pinned buffers while the copy \
         engine moves them to the device), against the pinned copy's {:.1} GB/s:",
        copy / GB
    );
    for transfer_mib in [16usize, 32, 64] {
        for slots in [2usize, 3, 4, 6, 8] {
            let r = (0..3)
                .map(|_| measure::staged_copy_rate(gpu, path, transfer_mib << 20, slots).unwrap())
                .fold(0.0, f64::max);
            println!(
                "  - {transfer_mib} MiB transfers, {slots} slots: {:.1} GB/s = {:.2} × (best of 3)",
                r / GB,
                r / copy
            );
        }
    }
}
