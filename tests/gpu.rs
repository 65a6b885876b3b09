//! The GPU backend, for both kinds of function (LI trees; KT128, KT256 and
//! ParallelHash128/256, whose chunks go to the GPU; TurboSHAKE, which stays
//! on the CPU): `--backend gpu` and `auto` with the GPUs there from the
//! first piece (the leaves and chunks shared with the CPU), against the
//! known answers of tests/vectors/, the reference at every boundary, the CPU
//! backend and plain SHA-3; files, sequential inputs and a file of
//! gigabytes; failures part-way. If you add a test of the GPU backend on
//! host memory, it goes here (inputs already in GPU memory are in
//! gpu_device.rs, lists that share the GPU in gpu_list.rs, parts made on the
//! GPU in parts.rs).
//!
//! These need a CUDA GPU, so CI skips them (they are `#[ignore]`d);
//! `scripts/gpu-check.sh` runs them on the device machine with `--ignored`,
//! and docs/GPU-TESTS.md records the results.
//!
//! The tests of several GPUs are ignored with their own reason, "needs two
//! CUDA GPUs". libtest cannot skip a test at run time, so where fewer GPUs
//! are visible they fail and say how many there are, rather than pass having
//! checked nothing; on a machine of one GPU, `scripts/gpu-check.sh` leaves
//! them out by name (`--skip`) and says that they were not run.
//!
//! That any split of a piece's chunks between engines gives the same digest
//! is checked without a GPU too, with engines whose answers come late
//! (`schedule::chunks`'s unit tests).

// The GPU backend is built on Linux only (build.rs's `gpu_backend`);
// elsewhere these tests are not compiled.
#![cfg(gpu_backend)]

mod common;

use std::io::Write;

use common::cases::{edge_cases, file_cases};
use common::{random_bytes, reference_digest, reference_tree};
use rand::rngs::StdRng;
use rand::{Rng, RngExt, SeedableRng};
use treehash::gpu::{CopyMode, LeafKernel};
use treehash::standard::{Family, Standard, StandardParams};
use treehash::{
    Algorithm, BackendChoice, BackendUsed, HashError, Hasher, HasherOptions, Params, TreeParams,
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

/// `Auto` with the GPUs started before the first piece, so that they take
/// leaves or chunks from it whatever the input's length.
fn auto_hasher(piece_bytes: Option<usize>, gpu_fail_after_transfers: Option<usize>) -> Hasher {
    Hasher::new(
        HasherOptions::default()
            .with_backend(BackendChoice::Auto)
            .with_piece_bytes(piece_bytes)
            .with_wait_for_gpus(true)
            .with_gpu_fail_after_transfers(gpu_fail_after_transfers),
    )
    .unwrap()
}

fn cpu_hasher() -> Hasher {
    Hasher::new(HasherOptions::default().with_backend(BackendChoice::Cpu)).unwrap()
}

/// Checks one digest against `want`, and that the engines' shares cover the
/// input.
fn check(out: &treehash::HashOutput, want: &[u8], len: usize, what: &str) {
    assert_eq!(out.digest, want, "{what}");
    assert_eq!(out.bytes, len as u64, "{what}");
    let shared: u64 = out.shares.iter().map(|s| s.bytes).sum();
    assert_eq!(shared, len as u64, "{what}: {:?}", out.shares);
}

/// Whether a GPU hashed any leaf or chunk.
fn gpu_took_part(out: &treehash::HashOutput) -> bool {
    out.shares.iter().any(|s| s.engine.is_gpu() && s.bytes > 0)
}

/// What `--backend gpu` must say of an input of `len` bytes: an LI tree
/// is the GPU's whatever its length; a standard function's chunks go to
/// the GPU (all of them but KT's first and the last, partial one), so a GPU
/// hashed some where the input has more than those, and none where it has
/// not; TurboSHAKE stays on the CPU.
fn check_backend_gpu(params: &Params, out: &treehash::HashOutput, len: usize, what: &str) {
    match params {
        Params::Standard(p) => {
            let first = usize::from(p.standard().family() == Family::Kangaroo);
            let chunked = p.standard().family() != Family::TurboShake;
            if chunked && len / p.block_size() > first {
                assert!(gpu_took_part(out), "{what}: {:?}", out.shares);
                assert_eq!(out.backend, BackendUsed::Gpu, "{what}");
            } else {
                assert!(!gpu_took_part(out), "{what}: {:?}", out.shares);
            }
        }
        _ => assert_eq!(out.backend, BackendUsed::Gpu, "{what}"),
    }
}

/// Every known answer of tests/vectors/ that treehash computes (the LI
/// vectors, the six wide-tree ones included; OpenSSL's plain SHA-3 and
/// SHAKE as H = 0 trees; RFC 9861's and SP 800-185's cases of TurboSHAKE,
/// KT and ParallelHash): with each leaf kernel forced and two piece
/// lengths, with the default kernel in pieces of 8192 and of 64 KiB, and
/// under `auto`. An LI tree under `--backend gpu` is the GPU's.
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_gpu_reproduces_every_vector() {
    let answers = common::known_answers();
    let mut hashers: Vec<(bool, Hasher)> = Vec::new();
    for kernel in KERNELS {
        for piece_bytes in [None, Some(4096)] {
            let hasher = gpu_hasher_with(piece_bytes, CopyMode::Staging, kernel);
            hashers.push((true, hasher));
        }
    }
    for piece_bytes in [Some(8192), Some(1 << 16)] {
        hashers.push((true, gpu_hasher(piece_bytes, CopyMode::Staging)));
    }
    hashers.push((false, auto_hasher(Some(8192), None)));
    for answer in &answers {
        for (k, (backend_gpu, hasher)) in hashers.iter().enumerate() {
            let out = hasher.hash_bytes(&answer.params, &answer.message).unwrap();
            let what = format!("{}, hasher {k}", answer.what);
            assert_eq!(
                hex::encode(&out.digest[answer.skip..]),
                answer.output,
                "{what}"
            );
            if *backend_gpu && matches!(answer.params, Params::Tree(_)) {
                assert_eq!(out.backend, BackendUsed::Gpu, "{what}");
            }
        }
    }
    let standard = answers
        .iter()
        .filter(|a| matches!(a.params, Params::Standard(_)))
        .count();
    assert!(standard >= 200, "only {standard} vectors of the standards");
}

/// The one table of both kinds at every boundary (`common::cases`: each LI
/// function in trees of 4, 16 and 27 leaves, every standard function with
/// its options; 0, 1, the rate ± 1, n stripes or chunks ± 1 for n up to
/// more than two warps of them, 300,001 bytes): the reference's digest and
/// shares that cover the input, under `--backend gpu` in pieces of one
/// chunk, of a few and of the default length (what each kind puts on the
/// GPU: [`check_backend_gpu`]), and under `auto` with the GPUs from the
/// first piece (even shares at first, then by their measured rates).
#[test]
#[ignore = "needs a CUDA GPU"]
fn backend_gpu_and_auto_match_the_reference_at_every_boundary() {
    let hashers = [
        (true, gpu_hasher(None, CopyMode::Staging)),
        (true, gpu_hasher(Some(8192), CopyMode::Staging)),
        (true, gpu_hasher(Some(5 * 8192), CopyMode::Staging)),
        (false, auto_hasher(Some(8192), None)),
        (false, auto_hasher(Some(3 * 8192), None)),
    ];
    let mut rng = StdRng::seed_from_u64(23);
    for case in edge_cases(&[1, 2, 3, 31, 32, 33, 70]) {
        for &len in &case.lens {
            let message = random_bytes(&mut rng, len);
            let want = reference_digest(&case.params, &message);
            for (k, (backend_gpu, hasher)) in hashers.iter().enumerate() {
                let out = hasher.hash_bytes(&case.params, &message).unwrap();
                let what = format!("{}, {len} bytes, hasher {k}", case.params.label());
                check(&out, &want, len, &what);
                if *backend_gpu {
                    check_backend_gpu(&case.params, &out, len, &what);
                }
            }
        }
    }
}

/// Long inputs of many pieces (of 1 MiB) under `auto`, for trees of every
/// shape and the standard functions with chunks: the CPU and the GPUs share
/// the leaves or chunks (even shares from the first piece, then by their
/// measured rates): the CPU backend's digest, and from 5 MiB on both
/// engines took a share and the shares cover the input.
#[test]
#[ignore = "needs a CUDA GPU"]
fn auto_shares_leaves_and_chunks_between_the_cpu_and_the_gpus() {
    let auto = auto_hasher(Some(1 << 20), None);
    let cpu = cpu_hasher();
    let mut rng = StdRng::seed_from_u64(11);
    let mut cases: Vec<Params> = [
        (Algorithm::Sha3_256, 1, 2),
        (Algorithm::Sha3_256, 4, 4),
        (Algorithm::Sha3_256, 8, 4),
        (Algorithm::Shake128, 2, 16),
        (Algorithm::Sha3_512, 3, 5),
    ]
    .into_iter()
    .map(|(algorithm, h, d)| TreeParams::new(algorithm, h, d).unwrap().into())
    .collect();
    for params in [
        StandardParams::new(Standard::Kt128),
        StandardParams::new(Standard::Kt256),
        StandardParams::new(Standard::ParallelHash128),
        StandardParams::new(Standard::ParallelHash256)
            .with_block_size(1000)
            .unwrap(),
    ] {
        cases.push(params.into());
    }
    for params in cases {
        for len in [
            0,
            1,
            135,
            136,
            137,
            5 << 20,
            (24 << 20) + 77,
            (48 << 20) + 77,
        ] {
            let data = random_bytes(&mut rng, len);
            let out = auto.hash_bytes(&params, &data).unwrap();
            let want = cpu.hash_bytes(&params, &data).unwrap();
            let what = format!("{} {len} bytes", params.label());
            assert_eq!(out.digest, want.digest, "{what}");
            if len >= 5 << 20 {
                check(&out, &want.digest, len, &what);
                assert!(gpu_took_part(&out), "{what}: {:?}", out.shares);
                assert_eq!(out.backend, BackendUsed::CpuGpu, "{what}: {:?}", out.shares);
            }
        }
    }
}

/// `common::cases::file_cases` (LI trees of 1 to 65,536 leaves, every
/// standard function with its options) from files (read with pread into the
/// GPU's buffers, in pieces, or by readers straight to the device) and as
/// sequential inputs, under `--backend gpu` and `auto`: the reference's
/// digest, the shares covering the input.
#[test]
#[ignore = "needs a CUDA GPU"]
fn files_and_sequential_inputs_on_the_gpu_match_the_reference() {
    let hashers = [
        gpu_hasher(Some(8192), CopyMode::Staging),
        gpu_hasher(Some(1 << 16), CopyMode::Staging),
        gpu_hasher(Some(8192), CopyMode::Readers),
        gpu_hasher(None, CopyMode::Readers),
        auto_hasher(Some(2 * 8192), None),
    ];
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m");
    let mut rng = StdRng::seed_from_u64(26);
    for case in file_cases() {
        for &len in &case.lens {
            let message = random_bytes(&mut rng, len);
            let want = reference_digest(&case.params, &message);
            std::fs::write(&path, &message).unwrap();
            for (k, hasher) in hashers.iter().enumerate() {
                let what = format!("{}, {len} bytes, hasher {k}", case.params.label());
                let from_file = hasher.hash_path(&case.params, &path, &()).unwrap();
                check(&from_file, &want, len, &format!("{what}, file"));
                let sequential = hasher
                    .hash_reader(&case.params, &mut std::io::Cursor::new(&message))
                    .unwrap();
                check(&sequential, &want, len, &format!("{what}, sequential"));
            }
        }
    }
}

/// A file of several gigabytes (5 GiB, or `TREEHASH_BIG_TEST_BYTES`),
/// larger than any ring of buffers, on the GPU and on the CPU: the same
/// digest, for a keyed LI tree through every copy mode (pinned staging,
/// the registered mapping, readers), for KT128 and ParallelHash256 staged
/// and by readers.
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_gpu_hashes_a_file_of_several_gigabytes() {
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
    let keyed = TreeParams::with_options(Algorithm::Sha3_256, 8, 4, None, vec![7; 5], None);
    let cases: [(Params, &[CopyMode]); 3] = [
        (
            keyed.unwrap().into(),
            &[CopyMode::Staging, CopyMode::Register, CopyMode::Readers],
        ),
        (
            StandardParams::new(Standard::Kt128).into(),
            &[CopyMode::Staging, CopyMode::Readers],
        ),
        (
            StandardParams::new(Standard::ParallelHash256).into(),
            &[CopyMode::Staging, CopyMode::Readers],
        ),
    ];
    for (params, modes) in cases {
        let want = cpu_hasher().hash_path(&params, &path, &()).unwrap();
        for &mode in modes {
            let got = gpu_hasher(None, mode)
                .hash_path(&params, &path, &())
                .unwrap();
            let what = format!("{}, {mode:?}", params.label());
            assert_eq!(got.backend, BackendUsed::Gpu, "{what}");
            assert_eq!(got.bytes, size, "{what}");
            assert_eq!(got.digest, want.digest, "{what}");
        }
    }
}

/// A GPU that fails part-way through (an error injected after two
/// transfers), for trees and KT128: under `auto` the CPU redoes the input,
/// with the right digest and a note, the next input does not go back to
/// that GPU, and a file is read again from its start; under `--backend
/// gpu` the same failure is an error, never a digest.
#[test]
#[ignore = "needs a CUDA GPU"]
fn auto_redoes_and_backend_gpu_reports_a_gpu_failing_midway() {
    let mut rng = StdRng::seed_from_u64(12);
    let cases: [(Params, usize); 3] = [
        (
            TreeParams::new(Algorithm::Sha3_256, 6, 4).unwrap().into(),
            32 << 20,
        ),
        (
            TreeParams::new(Algorithm::Sha3_256, 8, 4).unwrap().into(),
            16 << 20,
        ),
        (StandardParams::new(Standard::Kt128).into(), 16 << 20),
    ];
    for (params, len) in cases {
        let what = params.label();
        let data = random_bytes(&mut rng, len);
        let want = cpu_hasher().hash_bytes(&params, &data).unwrap().digest;
        let auto = auto_hasher(Some(1 << 20), Some(2));
        let out = auto.hash_bytes(&params, &data).unwrap();
        assert_eq!(out.digest, want, "{what}");
        assert_eq!(out.backend, BackendUsed::Cpu, "{what}");
        let note = out.fallback_note.expect("a note says the GPU failed");
        assert!(note.contains("injected"), "{what}: {note}");
        // The next input does not go back to that GPU.
        let again = auto.hash_bytes(&params, &data).unwrap();
        assert_eq!(
            (again.digest, again.backend),
            (want.clone(), BackendUsed::Cpu)
        );
        // The same from a file, read again from its start.
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(&data).unwrap();
        let from_file = auto_hasher(Some(1 << 20), Some(3))
            .hash_path(&params, file.path(), &())
            .unwrap();
        assert_eq!(from_file.digest, want, "{what}, file");
        // `--backend gpu`: an error, never a digest.
        let gpu = Hasher::new(
            HasherOptions::default()
                .with_backend(BackendChoice::Gpu)
                .with_piece_bytes(Some(1 << 20))
                .with_gpu_fail_after_transfers(Some(2)),
        )
        .unwrap();
        match gpu.hash_bytes(&params, &data) {
            Err(HashError::Gpu(e)) => assert!(e.contains("injected"), "{what}: {e}"),
            other => panic!(
                "{what}: expected a GPU error, got {:?}",
                other.map(|o| o.digest)
            ),
        }
    }
}

// ------------------------------------------------------------- LI trees only

/// The warp-per-leaf kernel on few leaves (1, 2, 4, 16, 64), every function,
/// block sizes below, at and above the rate and not multiples of it, a
/// prefix, SHAKE lengths, and transfers that end mid-block and mid-stripe.
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
                    let want = treehash_reference::tree_hash(&reference_tree(&params), &data);
                    assert_eq!(got.digest, want, "case {case}: {params:?}, {size} bytes");
                    case += 1;
                }
            }
        }
    }
}

/// Random parameters and sizes at every boundary that matters, with small
/// transfers so that inputs span three or more transfers and transfers end
/// mid-stripe.
#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_matches_cpu_on_random_cases() {
    let mut rng = StdRng::seed_from_u64(0x6e0);
    let cpu = cpu_hasher();
    // Every transfer size with each leaf kernel.
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
            let a = staged.hash_path(&params, &path, &()).unwrap();
            let b = registered.hash_path(&params, &path, &()).unwrap();
            let data = std::fs::read(&path).unwrap();
            assert_eq!(
                a.digest,
                treehash_reference::tree_hash(&reference_tree(&params), &data),
                "{size}"
            );
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
        assert_eq!(
            got.digest,
            treehash_reference::tree_hash(&reference_tree(&params), &data),
            "{size}"
        );
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

// ------------------------------------------------------------- several GPUs

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

/// `--backend gpu` on several GPUs: they start side by side and share the
/// work from the first piece, in a fresh hasher (no GPU open before the
/// input): each of n GPUs hashes at least 0.7 / n of the bytes (35 % of
/// two), for an LI tree's leaves and for KT128's chunks (an even split of
/// each wave: docs/decisions/0042). The digests are the CPU's.
#[test]
#[ignore = "needs two CUDA GPUs"]
fn gpus_begun_side_by_side_share_the_work_from_the_first_piece() {
    let gpus = two_or_more(&every_gpu_hasher()).len();
    let mut rng = StdRng::seed_from_u64(17);
    let cases: [(Params, usize); 2] = [
        (
            TreeParams::new(Algorithm::Sha3_256, 8, 4).unwrap().into(),
            (96 << 20) + 3,
        ),
        (StandardParams::new(Standard::Kt128).into(), (256 << 20) + 1),
    ];
    for (params, len) in cases {
        let hasher = Hasher::new(
            HasherOptions::default()
                .with_backend(BackendChoice::Gpu)
                .with_piece_bytes(Some(1 << 20)),
        )
        .unwrap();
        let data = random_bytes(&mut rng, len);
        let out = hasher.hash_bytes(&params, &data).unwrap();
        let what = params.label();
        assert_eq!(
            out.digest,
            cpu_hasher().hash_bytes(&params, &data).unwrap().digest,
            "{what}"
        );
        eprintln!("{what}, {len} bytes: {:?}", out.shares);
        assert_every_gpu_shares(&out, gpus, len, &what);
    }
}

/// Each of the `gpus` GPUs hashed at least 0.7 / `gpus` of the `len` bytes
/// of `out`'s input (35 % of two).
fn assert_every_gpu_shares(out: &treehash::HashOutput, gpus: usize, len: usize, what: &str) {
    let least = 0.7 / gpus as f64 * len as f64;
    let shares: Vec<u64> = out
        .shares
        .iter()
        .filter(|s| s.engine.is_gpu())
        .map(|s| s.bytes)
        .collect();
    assert_eq!(shares.len(), gpus, "{what}: {:?}", out.shares);
    for bytes in shares {
        assert!(bytes as f64 >= least, "{what}: {:?}", out.shares);
    }
}

/// A sequential input (its length unknown) under `--backend gpu` on every
/// GPU: they begin side by side, each owning its even share of the leaves
/// from the start, so that an empty or short input ends with several
/// owners, each finishing its leaves, and the host reducing them. The
/// digests are the reference's at 0, 1, rate ± 1, KT's chunk boundaries and
/// long inputs; the longest is shared by every GPU.
#[test]
#[ignore = "needs two CUDA GPUs"]
fn sequential_inputs_on_several_gpus_give_the_reference_digest() {
    let gpus = two_or_more(&every_gpu_hasher()).len();
    let hasher = every_gpu_hasher();
    let mut rng = StdRng::seed_from_u64(19);
    let all: [Params; 4] = [
        TreeParams::new(Algorithm::Sha3_256, 1, 4).unwrap().into(),
        TreeParams::new(Algorithm::Sha3_256, 8, 4).unwrap().into(),
        TreeParams::new(Algorithm::Shake128, 3, 2).unwrap().into(),
        StandardParams::new(Standard::Kt128).into(),
    ];
    let lens = [
        0,
        1,
        135,
        136,
        137,
        8191,
        8193,
        (3 << 20) + 7,
        (24 << 20) + 1,
    ];
    for params in all {
        for len in lens {
            let data = random_bytes(&mut rng, len);
            let out = hasher
                .hash_reader(&params, &mut std::io::Cursor::new(&data))
                .unwrap();
            let what = format!("{}, {len} bytes", params.label());
            assert_eq!(out.digest, reference_digest(&params, &data), "{what}");
            if len == lens[lens.len() - 1] {
                assert_eq!(busy_gpus(&out).len(), gpus, "{what}: {:?}", out.shares);
            }
        }
    }
}

/// Files under `--backend gpu` on every GPU: the GPUs begun side by side
/// each walk the file at their own pace, for an LI tree (its leaves split
/// evenly) and for a standard function (its waves of chunks dealt
/// round-robin: `schedule::chunks::apart`), in transfers of 1 MiB and 4 MiB (which let
/// 40 MiB be shared: `TRANSFERS_PER_SHARING_GPU`). The digests are the
/// reference's at 1, rate ± 1, KT's chunk boundaries and long inputs, for
/// LI trees of H = 1, 8 and 10 and every function with chunks; the long
/// ones are shared by every GPU, each with at least 0.7 / n of the bytes.
/// A GPU that fails midway makes the file an error.
#[test]
#[ignore = "needs two CUDA GPUs"]
fn files_on_several_gpus_give_the_reference_digest() {
    let gpus = two_or_more(&every_gpu_hasher()).len();
    let mut rng = StdRng::seed_from_u64(23);
    let dir = tempfile::tempdir().unwrap();
    let all: [Params; 7] = [
        TreeParams::new(Algorithm::Sha3_256, 1, 4).unwrap().into(),
        TreeParams::new(Algorithm::Sha3_256, 8, 4).unwrap().into(),
        TreeParams::new(Algorithm::Shake128, 10, 2).unwrap().into(),
        StandardParams::new(Standard::Kt128).into(),
        StandardParams::new(Standard::Kt256)
            .with_customization(vec![7; 9000])
            .unwrap()
            .into(),
        StandardParams::new(Standard::ParallelHash128)
            .with_block_size(1000)
            .unwrap()
            .into(),
        StandardParams::new(Standard::ParallelHash256).into(),
    ];
    let long = (40 << 20) + 7;
    let lens = [1, 135, 136, 137, 8191, 8192, 8193, (3 << 20) + 7, long];
    for piece_bytes in [Some(1 << 20), Some(4 << 20)] {
        let hasher = Hasher::new(
            HasherOptions::default()
                .with_backend(BackendChoice::Gpu)
                .with_piece_bytes(piece_bytes)
                .with_wait_for_gpus(true),
        )
        .unwrap();
        for params in &all {
            for len in lens {
                let data = random_bytes(&mut rng, len);
                let path = dir.path().join("file");
                std::fs::write(&path, &data).unwrap();
                let out = hasher.hash_path(params, &path, &()).unwrap();
                let what = format!("{}, {len} bytes, pieces {piece_bytes:?}", params.label());
                assert_eq!(out.digest, reference_digest(params, &data), "{what}");
                if len == long {
                    assert_every_gpu_shares(&out, gpus, len, &what);
                }
            }
        }
    }
    // A GPU that fails midway: an error, never a digest, for a file whose
    // leaves (LI) or chunks (KT128) the GPUs walk apart.
    let failing = Hasher::new(
        HasherOptions::default()
            .with_backend(BackendChoice::Gpu)
            .with_piece_bytes(Some(1 << 20))
            .with_wait_for_gpus(true)
            .with_gpu_fail_after_transfers(Some(2)),
    )
    .unwrap();
    let path = dir.path().join("file");
    std::fs::write(&path, random_bytes(&mut rng, long)).unwrap();
    for params in [&all[1], &all[3]] {
        match failing.hash_path(params, &path, &()) {
            Err(HashError::Gpu(e)) => assert!(e.contains("injected"), "{}: {e}", params.label()),
            other => panic!(
                "{}: expected a GPU error, got {:?}",
                params.label(),
                other.map(|o| o.digest)
            ),
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
