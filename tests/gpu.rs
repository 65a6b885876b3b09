//! The GPU backend against the shared vectors, the CPU backend and plain
//! SHA-3. These need a CUDA GPU, so CI skips them (they are `#[ignore]`d);
//! `scripts/gpu-check.sh` runs them on the device machine with `--ignored`,
//! and docs/GPU-TESTS.md records the results.
//!
//! The tests of several GPUs are ignored with their own reason, "needs two
//! CUDA GPUs". libtest cannot skip a test at run time, so where fewer GPUs
//! are visible they fail and say how many there are, rather than pass having
//! checked nothing; on a machine of one GPU, `scripts/gpu-check.sh` leaves
//! them out by name (`--skip`) and says that they were not run.

mod common;

use std::io::Write;

use rand::rngs::StdRng;
use rand::{Rng, RngExt, SeedableRng};
use treehash::gpu::{CopyMode, LeafKernel};
use treehash::{
    Algorithm, BackendChoice, BackendUsed, Hasher, HasherOptions, NoProgress, TreeParams, reference,
};

fn gpu_hasher(piece_bytes: Option<usize>, copy_mode: CopyMode) -> Hasher {
    gpu_hasher_with(piece_bytes, copy_mode, None)
}

/// Every leaf kernel, forced whatever the leaf count would pick.
const KERNELS: [Option<LeafKernel>; 2] = [
    Some(LeafKernel::ThreadPerLeaf),
    Some(LeafKernel::WarpPerLeaf),
];

fn gpu_hasher_with(
    piece_bytes: Option<usize>,
    copy_mode: CopyMode,
    gpu_leaf_kernel: Option<LeafKernel>,
) -> Hasher {
    let hasher = Hasher::new(
        HasherOptions::default()
            .with_backend(BackendChoice::Gpu)
            .with_piece_bytes(piece_bytes)
            .with_copy_mode(copy_mode)
            .with_gpu_leaf_kernel(gpu_leaf_kernel),
    )
    .unwrap();
    hasher.gpu().expect("a usable CUDA GPU");
    hasher
}

fn cpu_hasher() -> Hasher {
    Hasher::new(HasherOptions::default().with_backend(BackendChoice::Cpu)).unwrap()
}

fn random_bytes(rng: &mut StdRng, len: usize) -> Vec<u8> {
    let mut data = vec![0u8; len];
    rng.fill_bytes(&mut data);
    data
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_reproduces_every_vector_with_every_leaf_kernel() {
    for kernel in KERNELS {
        for piece_bytes in [None, Some(4096)] {
            let hasher = gpu_hasher_with(piece_bytes, CopyMode::Staging, kernel);
            for v in common::vectors() {
                let out = hasher.hash_bytes(&v.params(), &v.input()).unwrap();
                assert_eq!(out.backend, BackendUsed::Gpu);
                assert_eq!(
                    hex::encode(&out.digest),
                    v.digest,
                    "{v:?}, pieces {piece_bytes:?}, {kernel:?}"
                );
            }
        }
    }
}

/// The warp-per-leaf kernel on few leaves (1, 2, 4, 16, 64), every function,
/// block sizes below, at and above the rate and not multiples of it, a
/// prefix, SHAKE lengths, and chunks that end mid-block and mid-stripe.
#[test]
#[ignore = "needs a CUDA GPU"]
fn warp_per_leaf_kernel_matches_the_reference_on_few_leaves() {
    let mut rng = StdRng::seed_from_u64(0x3a7);
    let hashers: Vec<Hasher> = [Some(4096), Some(3 << 14), None]
        .into_iter()
        .map(|p| gpu_hasher_with(p, CopyMode::Staging, Some(LeafKernel::WarpPerLeaf)))
        .collect();
    let mut case = 0;
    for algorithm in Algorithm::ALL {
        let r = algorithm.rate();
        for (height, degree) in [(0, 2), (1, 2), (2, 2), (2, 4), (3, 4)] {
            for block_size in [8, r - 8, r, r + 8, 3 * r, 8 * 37] {
                for size in [0, 1, 7, 8, r - 1, r, r + 1, 5000, 100_003] {
                    let prefix = if case % 3 == 0 {
                        vec![0xA5; 1 + case % 200]
                    } else {
                        vec![]
                    };
                    let length = algorithm.is_xof().then(|| 1 + case % 300);
                    let params = TreeParams::with_options(
                        algorithm,
                        height,
                        degree,
                        Some(block_size),
                        prefix,
                        length,
                    )
                    .unwrap();
                    let data = random_bytes(&mut rng, size);
                    let got = hashers[case % hashers.len()]
                        .hash_bytes(&params, &data)
                        .unwrap();
                    let want = reference::tree_hash(&params, &data);
                    assert_eq!(got.digest, want, "case {case}: {params:?}, {size} bytes");
                    case += 1;
                }
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_height_zero_is_plain_sha3_by_openssl() {
    let hasher = gpu_hasher(Some(1 << 16), CopyMode::Staging);
    for v in common::plain_vectors() {
        let data = common::spec_input(v.input_len);
        let got = hasher.hash_bytes(&v.params(), &data).unwrap().digest;
        assert_eq!(hex::encode(got), v.digest, "{v:?}");
    }
}

/// Random parameters and sizes at every boundary that matters, with small
/// chunks so that inputs span three or more chunks and chunks end mid-stripe.
#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_matches_cpu_on_random_cases() {
    let mut rng = StdRng::seed_from_u64(0x6e0);
    let cpu = cpu_hasher();
    // Every chunk size with each leaf kernel.
    let gpus: Vec<Hasher> = [Some(4096), Some(3 << 16), None]
        .into_iter()
        .flat_map(|p| KERNELS.map(|k| gpu_hasher_with(p, CopyMode::Staging, k)))
        .collect();
    for case in 0..1500 {
        let algorithm = Algorithm::ALL[rng.random_range(0..6)];
        let (height, degree) = loop {
            let h = rng.random_range(0..=9u32);
            let d = rng.random_range(2..=16u64);
            if d.checked_pow(h).is_some_and(|l| l <= 1 << 16) {
                break (h, d);
            }
        };
        let block_size = match rng.random_range(0..3) {
            0 => None,
            1 => Some(8 * rng.random_range(1..=64usize)),
            _ => Some(algorithm.rate() * rng.random_range(1..=3usize)),
        };
        let prefix: Vec<u8> = match rng.random_range(0..3) {
            0 => (0..rng.random_range(1..=255))
                .map(|_| rng.random())
                .collect(),
            _ => Vec::new(),
        };
        let length = algorithm.is_xof().then(|| rng.random_range(1..=600usize));
        let params =
            TreeParams::with_options(algorithm, height, degree, block_size, prefix, length)
                .unwrap();
        let stripe = params.stripe_len() as usize;
        let rate = algorithm.rate();
        let size = match rng.random_range(0..7) {
            0 => rng.random_range(0..3),
            1 => rate + rng.random_range(0..3) - 1,
            2 => stripe + rng.random_range(0..3) - 1,
            3 => (stripe * rng.random_range(2..5)).min(1 << 22) + rng.random_range(0..3) - 1,
            4 => 4096 * rng.random_range(1..8) + rng.random_range(0..3) - 1,
            5 => rng.random_range(0..200_000),
            _ => rng.random_range(0..(3 << 20)),
        };
        let data = random_bytes(&mut rng, size);
        let want = cpu.hash_bytes(&params, &data).unwrap().digest;
        let gpu = &gpus[case % gpus.len()];
        let got = gpu.hash_bytes(&params, &data).unwrap().digest;
        assert_eq!(got, want, "case {case}: {params:?}, {size} bytes");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_streams_match_cpu() {
    let mut rng = StdRng::seed_from_u64(0x5);
    let cpu = cpu_hasher();
    let gpu = gpu_hasher(Some(1 << 16), CopyMode::Staging);
    for (height, degree, size) in [
        (0, 4, 100_003),
        (4, 4, 1_000_000),
        (8, 4, 5_000_001),
        (2, 64, 0),
    ] {
        let params = TreeParams::new(Algorithm::Sha3_256, height, degree).unwrap();
        let data = random_bytes(&mut rng, size);
        let out = gpu.hash_reader(&params, &mut &data[..]).unwrap();
        assert_eq!(out.bytes, size as u64);
        assert_eq!(out.digest, cpu.hash_bytes(&params, &data).unwrap().digest);
    }
}

/// A file of several gigabytes, larger than any chunk ring, through both copy
/// modes (pinned staging and the registered mapping), against the CPU.
#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_hashes_a_file_of_several_gigabytes() {
    let size: u64 = std::env::var("TREEHASH_BIG_TEST_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5 << 30);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.bin");
    {
        let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        let mut rng = StdRng::seed_from_u64(0xb16);
        let mut block = vec![0u8; 1 << 20];
        let mut left = size;
        while left > 0 {
            rng.fill_bytes(&mut block);
            let n = left.min(block.len() as u64) as usize;
            file.write_all(&block[..n]).unwrap();
            left -= n as u64;
        }
    }
    let params =
        TreeParams::with_options(Algorithm::Sha3_256, 8, 4, None, vec![7; 5], None).unwrap();
    let want = cpu_hasher().hash_path(&params, &path, &NoProgress).unwrap();
    for mode in [CopyMode::Staging, CopyMode::Register] {
        let got = gpu_hasher(None, mode)
            .hash_path(&params, &path, &NoProgress)
            .unwrap();
        assert_eq!(got.backend, BackendUsed::Gpu);
        assert_eq!(got.bytes, size);
        assert_eq!(got.digest, want.digest, "{mode:?}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn registered_copies_match_staged_copies_on_odd_sizes() {
    let mut rng = StdRng::seed_from_u64(0x7e6);
    let staged = gpu_hasher(Some(1 << 20), CopyMode::Staging);
    let registered = gpu_hasher(Some(1 << 20), CopyMode::Register);
    let dir = tempfile::tempdir().unwrap();
    for size in [1, 4095, 4096, 4097, (1 << 20) + 1, (5 << 20) + 12345] {
        let path = dir.path().join(format!("f{size}"));
        std::fs::write(&path, random_bytes(&mut rng, size)).unwrap();
        for prefix in [vec![], vec![1, 2, 3]] {
            let params =
                TreeParams::with_options(Algorithm::Shake128, 6, 4, None, prefix, Some(77))
                    .unwrap();
            let a = staged.hash_path(&params, &path, &NoProgress).unwrap();
            let b = registered.hash_path(&params, &path, &NoProgress).unwrap();
            let data = std::fs::read(&path).unwrap();
            assert_eq!(a.digest, reference::tree_hash(&params, &data), "{size}");
            assert_eq!(b.digest, a.digest, "{size}");
        }
    }
}

/// Bytes that are not a file mapping are staged even in register mode (a
/// heap slice's neighbouring pages are not ours to pin).
#[test]
#[ignore = "needs a CUDA GPU"]
fn register_mode_stages_heap_slices() {
    let mut rng = StdRng::seed_from_u64(0x4ea9);
    let registered = gpu_hasher(Some(1 << 16), CopyMode::Register);
    for size in [1, 4095, 4097, (1 << 20) + 3] {
        let data = random_bytes(&mut rng, size);
        let params = TreeParams::new(Algorithm::Sha3_256, 4, 4).unwrap();
        let got = registered.hash_bytes(&params, &data).unwrap();
        assert_eq!(got.digest, reference::tree_hash(&params, &data), "{size}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_missing_device_is_an_error_not_a_panic() {
    let hasher = Hasher::new(
        HasherOptions::default()
            .with_backend(BackendChoice::Gpu)
            .with_devices(treehash::gpu::Devices::List(vec![999])),
    )
    .unwrap();
    let err = hasher.gpu().err().expect("device 999 does not exist");
    assert!(err.to_string().contains("no CUDA device 999"), "{err}");
}

/// `Auto` with the GPUs started before the first piece (so that they join
/// at once, whatever the input's size).
fn auto_hasher(gpu_fail_after_chunks: Option<usize>) -> Hasher {
    Hasher::new(
        HasherOptions::default()
            .with_backend(BackendChoice::Auto)
            .with_piece_bytes(Some(1 << 20))
            .with_wait_for_gpus(true)
            .with_gpu_fail_after_chunks(gpu_fail_after_chunks),
    )
    .unwrap()
}

/// The CPU and every GPU share the leaves (even shares from the first
/// piece, then moved while the input's throughput rises): the CPU's
/// digest, for every shape of tree.
#[test]
#[ignore = "needs a CUDA GPU"]
fn auto_shares_leaves_between_the_cpu_and_the_gpus() {
    let auto = auto_hasher(None);
    let cpu = cpu_hasher();
    let mut rng = StdRng::seed_from_u64(11);
    for (algorithm, h, d) in [
        (Algorithm::Sha3_256, 1, 2),
        (Algorithm::Sha3_256, 4, 4),
        (Algorithm::Sha3_256, 8, 4),
        (Algorithm::Shake128, 2, 16),
        (Algorithm::Sha3_512, 3, 5),
    ] {
        let params = TreeParams::new(algorithm, h, d).unwrap();
        for len in [0, 1, 135, 136, 137, 5 << 20, (24 << 20) + 77] {
            let data = random_bytes(&mut rng, len);
            let out = auto.hash_bytes(&params, &data).unwrap();
            let want = cpu.hash_bytes(&params, &data).unwrap();
            assert_eq!(out.digest, want.digest, "{} {len} bytes", params.label());
            if len >= 5 << 20 {
                assert_eq!(
                    out.backend,
                    BackendUsed::CpuGpu,
                    "{} {len}: {:?}",
                    params.label(),
                    out.shares
                );
                let shared: u64 = out.shares.iter().map(|s| s.bytes).sum();
                assert_eq!(shared, len as u64);
            }
        }
    }
}

/// A GPU that fails part-way through (an error injected after two chunks)
/// under `Auto`: the CPU redoes the input, with the right digest and a note.
#[test]
#[ignore = "needs a CUDA GPU"]
fn auto_finishes_on_the_cpu_when_a_gpu_fails_midway() {
    let auto = auto_hasher(Some(2));
    let params = TreeParams::new(Algorithm::Sha3_256, 6, 4).unwrap();
    let mut rng = StdRng::seed_from_u64(12);
    let data = random_bytes(&mut rng, 32 << 20);
    let want = cpu_hasher().hash_bytes(&params, &data).unwrap().digest;
    let out = auto.hash_bytes(&params, &data).unwrap();
    assert_eq!(out.digest, want);
    assert_eq!(out.backend, BackendUsed::Cpu);
    let note = out.fallback_note.expect("a note says the GPU failed");
    assert!(note.contains("injected"), "{note}");
    // The next input does not go back to that GPU.
    let again = auto.hash_bytes(&params, &data).unwrap();
    assert_eq!((again.digest, again.backend), (want, BackendUsed::Cpu));
    // The same from a file, read again from its start.
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(&data).unwrap();
    let from_file = auto_hasher(Some(3))
        .hash_path(&params, file.path(), &NoProgress)
        .unwrap();
    assert_eq!(
        from_file.digest,
        cpu_hasher().hash_bytes(&params, &data).unwrap().digest
    );
}

/// `--backend gpu`: the same failure is an error, never a digest.
#[test]
#[ignore = "needs a CUDA GPU"]
fn backend_gpu_reports_a_gpu_failing_midway() {
    let hasher = Hasher::new(
        HasherOptions::default()
            .with_backend(BackendChoice::Gpu)
            .with_piece_bytes(Some(1 << 20))
            .with_gpu_fail_after_chunks(Some(2)),
    )
    .unwrap();
    let params = TreeParams::new(Algorithm::Sha3_256, 8, 4).unwrap();
    let data = vec![5u8; 16 << 20];
    match hasher.hash_bytes(&params, &data) {
        Err(treehash::HashError::Gpu(e)) => assert!(e.contains("injected"), "{e}"),
        other => panic!("expected a GPU error, got {:?}", other.map(|o| o.digest)),
    }
}

/// Every GPU of `hasher`, started: at least two, or the test fails and
/// says how many there are.
fn two_or_more(hasher: &Hasher) -> Vec<&treehash::gpu::GpuBackend> {
    match hasher.gpus() {
        Ok(gpus) if gpus.len() >= 2 => gpus,
        Ok(gpus) => panic!("needs two CUDA GPUs; this machine has {}", gpus.len()),
        Err(e) => panic!("needs two CUDA GPUs; none is usable here: {e}"),
    }
}

/// A hasher that starts every GPU, for `two_or_more`.
fn every_gpu_hasher() -> Hasher {
    Hasher::new(
        HasherOptions::default()
            .with_backend(BackendChoice::Gpu)
            .with_piece_bytes(Some(1 << 20))
            .with_wait_for_gpus(true),
    )
    .unwrap()
}

/// The distinct GPU engines that hashed bytes of an input.
fn busy_gpus(out: &treehash::HashOutput) -> std::collections::BTreeSet<treehash::EngineId> {
    out.shares
        .iter()
        .filter(|s| s.engine.is_gpu() && s.bytes > 0)
        .map(|s| s.engine)
        .collect()
}

/// `--backend gpu` on several GPUs without waiting for them: the first
/// hashes from the first piece and the others join when they are ready,
/// with the states of the leaves they take. The first input is hashed
/// while the others start in the background (they join it or not, as
/// their start allows); the test then waits for every GPU to be open, and
/// in the second input at least two GPUs must take a share. Both digests
/// are the CPU's.
#[test]
#[ignore = "needs two CUDA GPUs"]
fn gpus_that_start_late_join_a_gpu_only_run() {
    two_or_more(&every_gpu_hasher());
    let hasher = gpu_hasher(Some(1 << 20), CopyMode::Staging);
    let params = TreeParams::new(Algorithm::Sha3_256, 8, 4).unwrap();
    let mut rng = StdRng::seed_from_u64(17);
    for (round, len) in [(1, (96 << 20) + 3), (2, (384 << 20) + 1)] {
        if round == 2 {
            // Every GPU open (the background start waited for).
            hasher.gpus().unwrap();
        }
        let data = random_bytes(&mut rng, len);
        let out = hasher.hash_bytes(&params, &data).unwrap();
        assert_eq!(
            out.digest,
            cpu_hasher().hash_bytes(&params, &data).unwrap().digest,
            "input {round}"
        );
        let shared: u64 = out.shares.iter().map(|s| s.bytes).sum();
        assert_eq!(shared, len as u64, "input {round}: {:?}", out.shares);
        eprintln!("input {round}, {len} bytes: {:?}", out.shares);
        if round == 2 {
            let busy = busy_gpus(&out);
            assert!(busy.len() >= 2, "no second GPU joined: {:?}", out.shares);
        }
    }
}

/// Every visible GPU under `--backend gpu` shares the leaves when the
/// hasher waits for them all.
#[test]
#[ignore = "needs two CUDA GPUs"]
fn every_gpu_takes_a_share() {
    let hasher = every_gpu_hasher();
    let gpus = two_or_more(&hasher);
    let params = TreeParams::new(Algorithm::Sha3_256, 8, 4).unwrap();
    let mut rng = StdRng::seed_from_u64(13);
    let data = random_bytes(&mut rng, (64 << 20) + 5);
    let out = hasher.hash_bytes(&params, &data).unwrap();
    assert_eq!(
        out.digest,
        cpu_hasher().hash_bytes(&params, &data).unwrap().digest
    );
    assert_eq!(busy_gpus(&out).len(), gpus.len(), "{:?}", out.shares);
}
