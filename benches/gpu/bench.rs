//! GPU benchmark (needs a CUDA GPU; run by scripts/gpu-check.sh on the device
//! machine). Prints markdown tables of:
//! - the pinned host-to-device copy rate, the ceiling for hashing host data;
//! - the leaf kernel on data already in device memory, by leaf count;
//! - the standard functions' chunk kernel on data in device memory, and
//!   KT128 end to end on the GPU, the CPU and auto (TREEHASH_BENCH_FILE);
//! - end-to-end hashing of a page-cached file (TREEHASH_BENCH_FILE), by copy
//!   mode and transfer size, against the CPU backend, all in this one run.
//!
//! TREEHASH_BENCH_KERNELS_ONLY stops after the leaf-count table (for
//! comparing leaf kernels quickly); TREEHASH_BENCH_DEVICE_GIB=N measures
//! `device_digest` of N GiB alone.

use std::path::PathBuf;
use std::time::Instant;

use treehash::gpu::{CopyMode, LeafKernel, measure};
use treehash::{Algorithm, BackendChoice, Hasher, HasherOptions, TreeParams};

const GB: f64 = 1e9;

fn hasher(backend: BackendChoice, piece_bytes: Option<usize>, copy_mode: CopyMode) -> Hasher {
    Hasher::new(
        HasherOptions::default()
            .with_backend(backend)
            .with_piece_bytes(piece_bytes)
            .with_copy_mode(copy_mode),
    )
    .expect("a hasher")
}

/// The chunk kernel of each standard function with chunks, on 2 GiB in
/// device memory: KT's 8192-byte chunks, ParallelHash's B of 8192, 1000 (not
/// whole words) and 1 MiB (few chunks, one thread each).
fn chunk_kernels(gpu: &treehash::gpu::GpuBackend) {
    use treehash::standard::Standard;
    let spec = |s: Standard| s.chunk_spec().expect("a function with chunks");
    println!("## Chunk kernels (standard functions), 2 GiB on the device, median of 3\n");
    println!("| function | chunk bytes | GB/s |\n|---|---:|---:|");
    for (s, chunk) in [
        (Standard::Kt128, 8192),
        (Standard::Kt256, 8192),
        (Standard::ParallelHash128, 8192),
        (Standard::ParallelHash256, 8192),
        (Standard::ParallelHash128, 1000),
        (Standard::ParallelHash128, 1 << 20),
    ] {
        let (name, spec) = (s.standard_name(), spec(s));
        let rate = measure::chunk_kernel_rate(gpu, &spec, chunk, 2 << 30, 3).expect("kernel rate");
        println!("| {name} | {chunk} | {:.0} |", rate / GB);
    }
    println!();
}

/// KT128 of the bench file on each backend (GPU in-process against the
/// pinned copy rate: issue 23's target is 0.9 of it).
fn kt128_end_to_end(file: &std::path::Path, size: u64, reps: usize, copy: f64) {
    let params = treehash::StandardParams::new(treehash::Standard::Kt128);
    println!("## KT128 end to end, same file, median of {reps}\n");
    println!("| backend | GB/s | × pinned copy | shares (engine: GB) |\n|---|---:|---:|---|");
    // Last, auto with every GPU ready from the first piece (the testing
    // knob): what the CPU and a GPU reach together, whether or not auto's
    // start-up rule would have started the GPU for this file.
    let runs = [
        (BackendChoice::Gpu, false),
        (BackendChoice::Cpu, false),
        (BackendChoice::Auto, false),
        (BackendChoice::Auto, true),
    ];
    for (backend, together) in runs {
        let h = Hasher::new(
            HasherOptions::default()
                .with_backend(backend)
                .with_copy_mode(CopyMode::Staging)
                .with_wait_for_gpus(together),
        )
        .expect("a hasher");
        h.hash_path(&params, file, &()).expect("warm-up");
        let mut rates = Vec::new();
        let mut last = None;
        for _ in 0..reps {
            let start = Instant::now();
            let out = h.hash_path(&params, file, &()).expect("hash");
            rates.push(size as f64 / start.elapsed().as_secs_f64());
            last = Some(out);
        }
        let out = last.expect("at least one run");
        let shares: Vec<String> = out
            .shares
            .iter()
            .map(|s| format!("{}: {:.2}", s.engine, s.bytes as f64 / GB))
            .collect();
        let rate = median(rates);
        let name = match together {
            true => format!("{backend:?}, GPUs from the start"),
            false => format!("{backend:?}"),
        };
        println!(
            "| {name} | {:.1} | {:.2} | {} |",
            rate / GB,
            rate / copy,
            shares.join(", ")
        );
    }
    println!();
}

/// `Hasher::hash_device` of `gib` GiB already on GPU 0 (zeros), for LI
/// H = 8 and each standard function with chunks, median of `reps` after a
/// warm-up: the rate against LI's, and the phases (`leaves`: the GPU's work
/// with the last node fed beside it; `reduce`: the last bytes and the last
/// node's end, or LI's top levels).
fn device_digest_table(hasher: &Hasher, gib: usize, reps: usize) {
    use treehash::standard::{Standard, StandardParams};
    let ctx = cudarc::driver::CudaContext::new(0).expect("device 0");
    let stream = ctx.default_stream();
    let len = gib << 30;
    let data = stream.alloc_zeros::<u8>(len).expect("device memory");
    stream.synchronize().expect("zeroed");
    println!("## device_digest of {gib} GiB on the device, median of {reps} after a warm-up\n");
    println!(
        "| function | ms | GB/s | × LI | leaf phase ms | reduce ms |\n|---|---:|---:|---:|---:|---:|"
    );
    let li = TreeParams::new(Algorithm::Sha3_256, 8, TreeParams::DEFAULT_DEGREE).unwrap();
    let functions: Vec<(String, treehash::Params)> =
        std::iter::once(("LI H = 8".into(), li.into()))
            .chain(
                [Standard::Kt128, Standard::Kt256, Standard::ParallelHash256]
                    .into_iter()
                    .map(|f| (f.name().to_string(), StandardParams::new(f).into())),
            )
            .collect();
    let mut li_rate = None;
    for (name, params) in functions {
        hasher
            .hash_device_slice(params.clone(), &data)
            .expect("device digest");
        let mut runs = Vec::new();
        for _ in 0..reps {
            let start = Instant::now();
            let out = hasher
                .hash_device_slice(params.clone(), &data)
                .expect("device digest");
            runs.push((start.elapsed().as_secs_f64(), out.timings));
        }
        runs.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (secs, timings) = &runs[runs.len() / 2];
        let rate = len as f64 / secs;
        let li = *li_rate.get_or_insert(rate);
        println!(
            "| {name} | {:.2} | {:.1} | {:.2} | {:.2} | {:.2} |",
            secs * 1e3,
            rate / GB,
            rate / li,
            timings.leaves.as_secs_f64() * 1e3,
            timings.reduce.as_secs_f64() * 1e3
        );
    }
    println!();
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The kernels on data in device memory: leaf kernels by leaf count and by
/// function, and the standard functions' chunk kernels.
fn kernel_tables(gpu: &treehash::gpu::GpuBackend) {
    // Few leaves run long per byte: give each leaf the same amount of data.
    let bytes_for = |leaves: u64| (leaves << 23).min(2 << 30) as usize;
    println!("## Leaf kernels by leaf count, SHA3-256, data on the device (median of 3)\n");
    println!(
        "8 MiB per leaf (2 GiB at most); thread = one thread per leaf, warp = one warp per leaf; \
         auto picks warp up to {} leaves.\n",
        treehash::gpu::WARP_PER_LEAF_MAX_LEAVES
    );
    println!("| leaves L | thread GB/s | warp GB/s | warp / thread |\n|---:|---:|---:|---:|");
    for log2 in [0u32, 1, 2, 4, 6, 8, 10, 11, 12, 14, 16] {
        let params = TreeParams::new(Algorithm::Sha3_256, log2, 2).unwrap();
        let bytes = bytes_for(params.leaf_count());
        let rate = |k| measure::leaf_kernel_rate(gpu, &params, k, bytes, 3).expect("kernel rate");
        let thread = rate(LeafKernel::ThreadPerLeaf);
        let warp = rate(LeafKernel::WarpPerLeaf);
        println!(
            "| {} | {:.2} | {:.2} | {:.2} |",
            params.leaf_count(),
            thread / GB,
            warp / GB,
            warp / thread
        );
    }
    println!();
    if std::env::var_os("TREEHASH_BENCH_KERNELS_ONLY").is_some() {
        std::process::exit(0);
    }
    println!("## Leaf kernels by function, L = 256 and L = 65536, data on the device\n");
    println!(
        "| function | L = 256 thread | L = 256 warp | L = 65536 thread |\n|---|---:|---:|---:|"
    );
    for algorithm in Algorithm::ALL {
        let few = TreeParams::new(algorithm, 4, 4).unwrap();
        let many = TreeParams::new(algorithm, 8, 4).unwrap();
        let rate = |p: &TreeParams, k| {
            measure::leaf_kernel_rate(gpu, p, k, bytes_for(p.leaf_count()), 3).expect("kernel rate")
        };
        println!(
            "| {algorithm} | {:.2} | {:.2} | {:.0} |",
            rate(&few, LeafKernel::ThreadPerLeaf) / GB,
            rate(&few, LeafKernel::WarpPerLeaf) / GB,
            rate(&many, LeafKernel::ThreadPerLeaf) / GB
        );
    }
    println!();
    chunk_kernels(gpu);
}

pub(crate) fn main() {
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

    // TREEHASH_BENCH_DEVICE_GIB=N: device_digest of N GiB alone.
    if let Some(gib) = std::env::var("TREEHASH_BENCH_DEVICE_GIB")
        .ok()
        .and_then(|g| g.parse().ok())
    {
        let reps = std::env::var("TREEHASH_BENCH_REPS")
            .ok()
            .and_then(|r| r.parse().ok())
            .unwrap_or(5);
        device_digest_table(&gpu_hasher, gib, reps);
        return;
    }
    // TREEHASH_BENCH_KT_ONLY: the pinned copy and KT128 end to end alone;
    // TREEHASH_BENCH_END_TO_END_ONLY: every end-to-end table, no kernel table.
    let kt_only = std::env::var_os("TREEHASH_BENCH_KT_ONLY").is_some();
    if !kt_only && std::env::var_os("TREEHASH_BENCH_END_TO_END_ONLY").is_none() {
        kernel_tables(gpu);
    }

    let Some(file) = std::env::var_os("TREEHASH_BENCH_FILE").map(PathBuf::from) else {
        println!("(set TREEHASH_BENCH_FILE to a page-cached file for the end-to-end table)");
        return;
    };
    let size = std::fs::metadata(&file).expect("bench file").len();
    let reps: usize = std::env::var("TREEHASH_BENCH_REPS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    kt128_end_to_end(&file, size, reps, copy);
    if kt_only {
        return;
    }
    println!(
        "## End to end, {:.2} GB page-cached file, SHA3-256, median of {reps} (pinned copy {:.1} GB/s)\n",
        size as f64 / GB,
        copy / GB
    );
    println!(
        "| backend | copy mode | transfer MiB | H (D=4) | GB/s | × pinned copy | leaf phase ms | copies busy ms | kernels busy ms | reduce ms |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut runs: Vec<(BackendChoice, CopyMode, Option<usize>, u32)> = Vec::new();
    for transfer in [16usize, 32, 64, 128, 256] {
        runs.push((
            BackendChoice::Gpu,
            CopyMode::Staging,
            Some(transfer << 20),
            8,
        ));
    }
    runs.push((BackendChoice::Gpu, CopyMode::Register, None, 8));
    for height in [4, 5, 6, 7, 9, 10] {
        runs.push((BackendChoice::Gpu, CopyMode::Staging, None, height));
    }
    runs.push((BackendChoice::Cpu, CopyMode::Staging, None, 8));
    for (backend, mode, transfer, height) in runs {
        let h = hasher(backend, transfer, mode);
        let params = TreeParams::new(Algorithm::Sha3_256, height, 4).unwrap();
        h.hash_path(&params, &file, &()).expect("warm-up");
        let mut rates = Vec::new();
        let mut last = None;
        let reps = if backend == BackendChoice::Cpu {
            1
        } else {
            reps
        };
        for _ in 0..reps {
            let start = Instant::now();
            let out = h.hash_path(&params, &file, &()).expect("hash");
            rates.push(size as f64 / start.elapsed().as_secs_f64());
            last = Some(out);
        }
        let out = last.expect("at least one run");
        let rate = median(rates);
        let t = out.timings;
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        let transfer_mib = transfer.unwrap_or(treehash::gpu::DEFAULT_TRANSFER_BYTES) >> 20;
        let (backend_name, mode_name) = match backend {
            BackendChoice::Cpu => ("cpu", "-".to_string()),
            _ => ("gpu", format!("{mode:?}").to_lowercase()),
        };
        println!(
            "| {backend_name} | {mode_name} | {transfer_mib} | {height} | {:.1} | {:.2} | {:.0} | {:.0} | {:.0} | {:.1} |",
            rate / GB,
            rate / copy,
            ms(t.leaves),
            ms(t.copy_busy),
            ms(t.kernel_busy),
            ms(t.reduce)
        );
    }
}
