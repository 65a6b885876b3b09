//! The standard functions (KT128, KT256, ParallelHash128/256; TurboSHAKE,
//! which stays on the CPU) on the GPU: `--backend gpu` and `auto` with the
//! GPUs there from the first piece (the chunks shared with the CPU), against
//! the reference at every boundary, the RFC 9861 and SP 800-185 vectors,
//! files and streams, failures part-way, and inputs already in device
//! memory (`Hasher::hash_device`). These need a CUDA GPU, so CI skips them
//! (they are `#[ignore]`d); `scripts/gpu-check.sh run` runs them on the
//! device machine with `--ignored`.
//!
//! That any split of a piece's chunks between engines gives the same digest
//! is checked without a GPU too, with engines whose answers come late
//! (`standard::run`'s unit tests).

mod common;

use std::io::Write;

use cudarc::driver::{CudaContext, CudaSlice, CudaStream};
use rand::rngs::StdRng;
use rand::{Rng, RngExt, SeedableRng};
use serde_json::Value;
use treehash::standard::{Family, Standard, StandardParams};
use treehash::{BackendChoice, BackendUsed, HashError, Hasher, HasherOptions, NoProgress, Params};

fn gpu_hasher(piece_bytes: Option<usize>) -> Hasher {
    let hasher = Hasher::new(
        HasherOptions::default()
            .with_backend(BackendChoice::Gpu)
            .with_piece_bytes(piece_bytes),
    )
    .unwrap();
    hasher.gpu().expect("a usable CUDA GPU");
    hasher
}

/// `Auto` with the GPUs started before the first piece, so that they take
/// chunks from it whatever the input's length.
fn auto_hasher(piece_bytes: Option<usize>, gpu_fail_after_chunks: Option<usize>) -> Hasher {
    Hasher::new(
        HasherOptions::default()
            .with_backend(BackendChoice::Auto)
            .with_piece_bytes(piece_bytes)
            .with_wait_for_gpus(true)
            .with_gpu_fail_after_chunks(gpu_fail_after_chunks),
    )
    .unwrap()
}

fn cpu_hasher() -> Hasher {
    Hasher::new(HasherOptions::default().with_backend(BackendChoice::Cpu)).unwrap()
}

fn reference(params: &StandardParams, message: &[u8]) -> Vec<u8> {
    common::reference_digest(&Params::Standard(params.clone()), message)
}

fn random_bytes(rng: &mut StdRng, len: usize) -> Vec<u8> {
    let mut data = vec![0u8; len];
    rng.fill_bytes(&mut data);
    data
}

/// Whether the function's chunks go to the GPU (TurboSHAKE's do not).
fn chunked(params: &StandardParams) -> bool {
    params.standard().family() != Family::TurboShake
}

/// The length of the function's chunks (8192 for TurboSHAKE, for its lengths).
fn chunk_len(params: &StandardParams) -> usize {
    match params.standard().family() {
        Family::TurboShake => 8192,
        _ => params.block_size(),
    }
}

/// Every function with its defaults and with its options: customization
/// strings (KT's C longer than a chunk), ParallelHash's B whole words or not
/// (1, 7, 13, 136, 137, 1000), output lengths shorter than a word and longer
/// than a rate.
fn cases() -> Vec<StandardParams> {
    let mut cases = Vec::new();
    for standard in Standard::ALL {
        let base = StandardParams::new(standard);
        cases.push(base.clone());
        match standard.family() {
            Family::Kangaroo => {
                for c in [&b"C"[..], &[0x5a; 9000]] {
                    let p = base.clone().with_customization(c.to_vec()).unwrap();
                    cases.push(p.with_output_len(7).unwrap());
                }
            }
            Family::ParallelHash => {
                for (b, s) in [
                    (1usize, &b""[..]),
                    (7, b"S"),
                    (13, b""),
                    (136, b""),
                    (137, b"Parallel Data"),
                    (1000, b""),
                ] {
                    let p = base.clone().with_block_size(b).unwrap();
                    cases.push(p.with_customization(s.to_vec()).unwrap());
                }
                cases.push(base.clone().with_output_len(300).unwrap());
            }
            Family::TurboShake => {
                cases.push(base.clone().with_domain(0x06).unwrap());
            }
            // `Family` may grow: a new family needs cases of its options.
            other => panic!("no cases for the options of {other:?}"),
        }
    }
    cases
}

/// The lengths around a function's boundaries: 0, 1, the rate ± 1, and
/// n chunks ± 1 for n up to more than two warps of chunks.
fn lengths(params: &StandardParams) -> Vec<usize> {
    let r = params.standard().rate();
    let b = chunk_len(params);
    let mut lens = vec![0, 1, r - 1, r, r + 1];
    for n in [1, 2, 3, 31, 32, 33, 70] {
        lens.extend([n * b - 1, n * b, n * b + 1]);
    }
    lens.sort_unstable();
    lens.dedup();
    lens
}

/// Checks one digest against `want`, and that the engines' shares cover the
/// input.
fn check(out: &treehash::HashOutput, want: &[u8], len: usize, what: &str) {
    assert_eq!(out.digest, want, "{what}");
    assert_eq!(out.bytes, len as u64, "{what}");
    let shared: u64 = out.shares.iter().map(|s| s.bytes).sum();
    assert_eq!(shared, len as u64, "{what}: {:?}", out.shares);
}

/// Whether a GPU hashed any chunk.
fn gpu_took_part(out: &treehash::HashOutput) -> bool {
    out.shares.iter().any(|s| s.engine.is_gpu() && s.bytes > 0)
}

/// `--backend gpu` in pieces of one chunk, of a few and of the default
/// size: the reference's digest, the chunks on the GPU (all of them but
/// KT's first and the last, partial one), TurboSHAKE on the CPU.
#[test]
#[ignore = "needs a CUDA GPU"]
fn backend_gpu_matches_the_reference_at_every_boundary() {
    let hashers = [
        gpu_hasher(None),
        gpu_hasher(Some(8192)),
        gpu_hasher(Some(5 * 8192)),
    ];
    let mut rng = StdRng::seed_from_u64(23);
    for params in cases() {
        for len in lengths(&params) {
            let message = random_bytes(&mut rng, len);
            let want = reference(&params, &message);
            for (k, hasher) in hashers.iter().enumerate() {
                let out = hasher.hash_bytes(&params, &message).unwrap();
                let what = format!("{}, {len} bytes, hasher {k}", params.label());
                check(&out, &want, len, &what);
                let b = chunk_len(&params);
                let first = usize::from(params.standard().family() == Family::Kangaroo);
                if chunked(&params) && len / b > first {
                    assert!(gpu_took_part(&out), "{what}: {:?}", out.shares);
                    assert_eq!(out.backend, BackendUsed::Gpu, "{what}");
                } else {
                    assert!(!gpu_took_part(&out), "{what}: {:?}", out.shares);
                }
            }
        }
    }
}

/// `auto` with the GPUs from the first piece: the chunks shared between the
/// CPU and the GPUs piece by piece (even shares at first, then by their
/// measured rates), the reference's digest.
#[test]
#[ignore = "needs a CUDA GPU"]
fn auto_shares_chunks_and_matches_the_reference() {
    let hashers = [
        auto_hasher(Some(8192), None),
        auto_hasher(Some(3 * 8192), None),
    ];
    let mut rng = StdRng::seed_from_u64(24);
    for params in cases() {
        for len in lengths(&params) {
            let message = random_bytes(&mut rng, len);
            let want = reference(&params, &message);
            for (k, hasher) in hashers.iter().enumerate() {
                let out = hasher.hash_bytes(&params, &message).unwrap();
                check(
                    &out,
                    &want,
                    len,
                    &format!("{}, {len}, hasher {k}", params.label()),
                );
            }
        }
    }
}

/// Long inputs of many pieces under `auto`, where the split follows the
/// measured rates: the CPU's digest, and both engines took chunks.
#[test]
#[ignore = "needs a CUDA GPU"]
fn auto_splits_long_inputs_by_rate() {
    let cpu = cpu_hasher();
    let mut rng = StdRng::seed_from_u64(25);
    let auto = auto_hasher(Some(1 << 20), None);
    for params in [
        StandardParams::new(Standard::Kt128),
        StandardParams::new(Standard::Kt256),
        StandardParams::new(Standard::ParallelHash128),
        StandardParams::new(Standard::ParallelHash256)
            .with_block_size(1000)
            .unwrap(),
    ] {
        for len in [5 << 20, (48 << 20) + 77] {
            let message = random_bytes(&mut rng, len);
            let want = cpu.hash_bytes(&params, &message).unwrap().digest;
            let out = auto.hash_bytes(&params, &message).unwrap();
            let what = format!("{} {len} bytes", params.label());
            check(&out, &want, len, &what);
            assert!(gpu_took_part(&out), "{what}: {:?}", out.shares);
            assert_eq!(out.backend, BackendUsed::CpuGpu, "{what}: {:?}", out.shares);
        }
    }
}

/// A byte string as the vector files write it.
fn vector_bytes(value: &Value) -> Vec<u8> {
    if let Some(hex) = value.get("hex").and_then(Value::as_str) {
        return hex::decode(hex).unwrap();
    }
    if let Some(ascii) = value.get("ascii").and_then(Value::as_str) {
        return ascii.as_bytes().to_vec();
    }
    let n = value
        .get("ptn")
        .and_then(Value::as_u64)
        .expect("hex, ascii or ptn");
    common::spec_input(n as usize)
}

/// Every vector of tests/vectors/rfc9861.json and sp800-185.json that
/// treehash computes (not cSHAKE alone, not the XOF variants): parameters,
/// message, bytes of the output to skip, and the output in hex.
fn vectors() -> Vec<(StandardParams, Vec<u8>, usize, String)> {
    let mut all = Vec::new();
    for text in [
        include_str!("vectors/rfc9861.json"),
        include_str!("vectors/sp800-185.json"),
    ] {
        let file: Value = serde_json::from_str(text).unwrap();
        for group in file["groups"].as_array().unwrap() {
            let function = group["function"].as_str().unwrap();
            let Some(standard) = Standard::from_name(function) else {
                continue;
            };
            for case in group["cases"].as_array().unwrap() {
                let output_len = case["output_len"].as_u64().unwrap() as usize;
                let mut params = StandardParams::new(standard)
                    .with_output_len(output_len)
                    .unwrap();
                if let Some(c) = case.get("customization") {
                    params = params.with_customization(vector_bytes(c)).unwrap();
                }
                if let Some(d) = case.get("domain").and_then(Value::as_str) {
                    params = params
                        .with_domain(u8::from_str_radix(d, 16).unwrap())
                        .unwrap();
                }
                if let Some(b) = case.get("block_size").and_then(Value::as_u64) {
                    params = params.with_block_size(b as usize).unwrap();
                }
                let skip = case.get("skip").and_then(Value::as_u64).unwrap_or(0) as usize;
                let output = case["output"].as_str().unwrap().to_string();
                all.push((params, vector_bytes(&case["message"]), skip, output));
            }
        }
    }
    all
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_gpu_reproduces_the_standards_vectors() {
    let vectors = vectors();
    assert!(vectors.len() >= 200, "only {} vectors", vectors.len());
    let hashers = [
        gpu_hasher(None),
        gpu_hasher(Some(8192)),
        auto_hasher(Some(8192), None),
    ];
    for (params, message, skip, output) in &vectors {
        for hasher in &hashers {
            let out = hasher.hash_bytes(params, message).unwrap();
            assert_eq!(
                hex::encode(&out.digest[*skip..]),
                *output,
                "{} of {} bytes",
                params.label(),
                message.len()
            );
        }
    }
}

/// Files (read with pread into the GPU's buffers, in pieces) and streams.
#[test]
#[ignore = "needs a CUDA GPU"]
fn files_and_streams_on_the_gpu_match_the_reference() {
    let hashers = [gpu_hasher(Some(8192)), auto_hasher(Some(2 * 8192), None)];
    let dir = tempfile::tempdir().unwrap();
    let mut rng = StdRng::seed_from_u64(26);
    for params in cases().into_iter().step_by(2) {
        let b = chunk_len(&params);
        for len in [0, 8191, 8193, 5 * b + 17, 300_001] {
            let message = random_bytes(&mut rng, len);
            let want = reference(&params, &message);
            let path = dir.path().join("m");
            std::fs::File::create(&path)
                .unwrap()
                .write_all(&message)
                .unwrap();
            for hasher in &hashers {
                let what = format!("{}, {len} bytes", params.label());
                let from_file = hasher.hash_path(&params, &path, &NoProgress).unwrap();
                check(&from_file, &want, len, &format!("{what}, file"));
                let from_stream = hasher
                    .hash_reader(&params, &mut std::io::Cursor::new(&message))
                    .unwrap();
                check(&from_stream, &want, len, &format!("{what}, stream"));
            }
        }
    }
}

/// A file larger than any ring of buffers, on the GPU and on the CPU:
/// the same digest (1 GiB, or `TREEHASH_BIG_TEST_BYTES`).
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_gpu_hashes_a_large_file() {
    let size: u64 = std::env::var("TREEHASH_BIG_TEST_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1 << 30);
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
    for params in [
        StandardParams::new(Standard::Kt128),
        StandardParams::new(Standard::ParallelHash256),
    ] {
        let want = cpu_hasher().hash_path(&params, &path, &NoProgress).unwrap();
        let got = gpu_hasher(None)
            .hash_path(&params, &path, &NoProgress)
            .unwrap();
        assert_eq!(got.backend, BackendUsed::Gpu);
        assert_eq!(got.bytes, size);
        assert_eq!(got.digest, want.digest, "{}", params.label());
    }
}

/// A GPU that fails part-way (an error injected after two chunk launches)
/// under `auto`: the CPU redoes the input, with the right digest and a note;
/// under `--backend gpu` the failure is an error, never a digest.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_gpu_failing_midway_is_redone_on_the_cpu_or_reported() {
    let params = StandardParams::new(Standard::Kt128);
    let mut rng = StdRng::seed_from_u64(27);
    let data = random_bytes(&mut rng, 16 << 20);
    let want = cpu_hasher().hash_bytes(&params, &data).unwrap().digest;
    let auto = auto_hasher(Some(1 << 20), Some(2));
    let out = auto.hash_bytes(&params, &data).unwrap();
    assert_eq!(out.digest, want);
    assert_eq!(out.backend, BackendUsed::Cpu);
    let note = out.fallback_note.expect("a note says the GPU failed");
    assert!(note.contains("injected"), "{note}");
    let gpu = Hasher::new(
        HasherOptions::default()
            .with_backend(BackendChoice::Gpu)
            .with_piece_bytes(Some(1 << 20))
            .with_gpu_fail_after_chunks(Some(2)),
    )
    .unwrap();
    match gpu.hash_bytes(&params, &data) {
        Err(HashError::Gpu(e)) => assert!(e.contains("injected"), "{e}"),
        other => panic!("expected a GPU error, got {:?}", other.map(|o| o.digest)),
    }
}

/// A stream of device 0's primary context, as a producer would have one.
fn producer() -> std::sync::Arc<CudaStream> {
    CudaContext::new(0).unwrap().new_stream().unwrap()
}

fn upload(stream: &std::sync::Arc<CudaStream>, bytes: &[u8]) -> CudaSlice<u8> {
    // An empty allocation is not allowed: keep one byte more.
    let mut padded = bytes.to_vec();
    padded.push(0);
    let slice = stream.clone_htod(&padded).unwrap();
    stream.synchronize().unwrap();
    slice
}

/// Inputs already in device memory, at every address offset mod 8 and at
/// the boundaries: the host's digest. KT and ParallelHash hash on the GPU
/// where the bytes lie; TurboSHAKE is copied to the host and hashed there.
#[test]
#[ignore = "needs a CUDA GPU"]
fn device_inputs_equal_the_host_digest() {
    let (gpu, cpu, stream) = (gpu_hasher(None), cpu_hasher(), producer());
    let mut rng = StdRng::seed_from_u64(28);
    let data = random_bytes(&mut rng, (3 << 20) + 64);
    let slice = upload(&stream, &data);
    for params in cases() {
        let b = chunk_len(&params);
        let most = data.len() - 8;
        let mut lens = vec![0, 1, b - 1, b, b + 1, 40 * b + 3, rng.random_range(0..most)];
        lens.retain(|&len| len <= most);
        for len in lens {
            for offset in [0, 1, 4, 7] {
                let input = &data[offset..offset + len];
                let out = gpu
                    .hash_device_slice(&params, &slice.slice(offset..offset + len))
                    .unwrap();
                let what = format!("{}, {len} bytes at +{offset}", params.label());
                let want = cpu.hash_bytes(&params, input).unwrap().digest;
                assert_eq!(out.digest, want, "{what}");
                if len <= 1 << 20 {
                    assert_eq!(out.digest, reference(&params, input), "{what}");
                }
                let on = if chunked(&params) {
                    BackendUsed::Gpu
                } else {
                    BackendUsed::Cpu
                };
                assert_eq!(out.backend, on, "{what}");
            }
        }
    }
    // Parameters of either kind go through the one entry point.
    let tree = Params::Tree(treehash::TreeParams::default());
    let out = gpu.hash_device_slice(&tree, &slice.slice(..1000)).unwrap();
    assert_eq!(
        out.digest,
        cpu.hash_bytes(&tree, &data[..1000]).unwrap().digest
    );
}
