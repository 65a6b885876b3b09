//! GPU benchmark (needs a CUDA GPU; run by scripts/gpu-check.sh on the device
//! machine). Prints markdown tables of:
//! - the pinned host-to-device copy rate, the ceiling for hashing host data;
//! - the leaf kernel on data already in device memory, by leaf count;
//! - end-to-end hashing of a page-cached file (TREEHASH_BENCH_FILE), by copy
//!   mode and chunk size, against the CPU backend, all in this one run.

use std::path::PathBuf;
use std::time::Instant;

use treehash::gpu::{CopyMode, measure};
use treehash::{Algorithm, BackendChoice, Hasher, HasherOptions, NoProgress, TreeParams};

const GB: f64 = 1e9;

fn hasher(backend: BackendChoice, piece_bytes: Option<usize>, copy_mode: CopyMode) -> Hasher {
    Hasher::new(HasherOptions {
        backend,
        piece_bytes,
        copy_mode,
        ..Default::default()
    })
    .expect("a hasher")
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    if std::env::args().any(|a| a == "--bench" || a == "--list") && !treehash::gpu::driver_present()
    {
        println!("gpu benchmark: no CUDA driver here; nothing to measure");
        return;
    }
    let gpu_hasher = hasher(BackendChoice::Gpu, None, CopyMode::Staging);
    let gpu = match gpu_hasher.gpu() {
        Ok(gpu) => gpu,
        Err(e) => {
            println!("gpu benchmark: {e}");
            return;
        }
    };
    let info = gpu.info();
    println!(
        "# GPU benchmark: {} ({}, {:.0} GiB), driver start-up {:.0} ms\n",
        info.name,
        info.arch,
        info.memory_bytes as f64 / (1u64 << 30) as f64,
        info.init.as_secs_f64() * 1e3
    );

    let copy = measure::pinned_copy_rate(gpu, 1 << 30, 10).expect("copy rate");
    println!(
        "pinned host-to-device copy, 1 GiB, median of 10: {:.1} GB/s\n",
        copy / GB
    );

    println!("## Leaf kernel, SHA3-256, 2 GiB already on the device (median of 5)\n");
    println!("| leaves L | height (D=4) | GB/s |\n|---:|---:|---:|");
    for height in [5u32, 6, 7, 8, 9, 10] {
        let params = TreeParams::new(Algorithm::Sha3_256, height, 4).unwrap();
        let rate = measure::leaf_kernel_rate(gpu, &params, 2 << 30, 5).expect("kernel rate");
        println!("| {} | {height} | {:.0} |", params.leaf_count(), rate / GB);
    }
    println!();
    println!("## Leaf kernel by function, L = 65536, 2 GiB on the device\n");
    println!("| function | GB/s |\n|---|---:|");
    for algorithm in Algorithm::ALL {
        let params = TreeParams::new(algorithm, 8, 4).unwrap();
        let rate = measure::leaf_kernel_rate(gpu, &params, 2 << 30, 5).expect("kernel rate");
        println!("| {algorithm} | {:.0} |", rate / GB);
    }
    println!();

    let Some(file) = std::env::var_os("TREEHASH_BENCH_FILE").map(PathBuf::from) else {
        println!("(set TREEHASH_BENCH_FILE to a page-cached file for the end-to-end table)");
        return;
    };
    let size = std::fs::metadata(&file).expect("bench file").len();
    let reps: usize = std::env::var("TREEHASH_BENCH_REPS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    println!(
        "## End to end, {:.2} GB page-cached file, SHA3-256, median of {reps} (pinned copy {:.1} GB/s)\n",
        size as f64 / GB,
        copy / GB
    );
    println!(
        "| backend | copy mode | chunk MiB | H (D=4) | GB/s | × pinned copy | leaf phase ms | copies busy ms | kernels busy ms | reduce ms |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut runs: Vec<(BackendChoice, CopyMode, Option<usize>, u32)> = Vec::new();
    for chunk in [16usize, 32, 64, 128, 256] {
        runs.push((BackendChoice::Gpu, CopyMode::Staging, Some(chunk << 20), 8));
    }
    runs.push((BackendChoice::Gpu, CopyMode::Register, None, 8));
    for height in [7, 9, 10] {
        runs.push((BackendChoice::Gpu, CopyMode::Staging, None, height));
    }
    runs.push((BackendChoice::Cpu, CopyMode::Staging, None, 8));
    for (backend, mode, chunk, height) in runs {
        let h = hasher(backend, chunk, mode);
        let params = TreeParams::new(Algorithm::Sha3_256, height, 4).unwrap();
        h.hash_path(&params, &file, &NoProgress).expect("warm-up");
        let mut rates = Vec::new();
        let mut last = None;
        let reps = if backend == BackendChoice::Cpu {
            1
        } else {
            reps
        };
        for _ in 0..reps {
            let start = Instant::now();
            let out = h.hash_path(&params, &file, &NoProgress).expect("hash");
            rates.push(size as f64 / start.elapsed().as_secs_f64());
            last = Some(out);
        }
        let out = last.expect("at least one run");
        let rate = median(rates);
        let t = out.timings;
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        let chunk_mib = chunk.unwrap_or(treehash::gpu::DEFAULT_CHUNK_BYTES) >> 20;
        let (backend_name, mode_name) = match backend {
            BackendChoice::Cpu => ("cpu", "-".to_string()),
            _ => ("gpu", format!("{mode:?}").to_lowercase()),
        };
        println!(
            "| {backend_name} | {mode_name} | {chunk_mib} | {height} | {:.1} | {:.2} | {:.0} | {:.0} | {:.0} | {:.1} |",
            rate / GB,
            rate / copy,
            ms(t.leaves),
            ms(t.copy_busy),
            ms(t.kernel_busy),
            ms(t.reduce)
        );
    }
}
