//! Inputs already in GPU memory (`Hasher::hash_device`), for both kinds of
//! function (LI trees; KT and ParallelHash hashed on the GPU where the bytes
//! lie; TurboSHAKE copied to the host and hashed there), against the same
//! bytes hashed from the host, the known answers of tests/vectors/ and the
//! reference; and what the entry point refuses or keeps (host memory, a
//! range past its allocation, the producer's CUDA stream, the caller's
//! context). If you add a test of `hash_device`, it goes here. These need a
//! CUDA GPU, so CI skips them (they are `#[ignore]`d); on the device
//! machine: `cargo test --release --test gpu_device -- --ignored`.

// The GPU backend is built on Linux only (build.rs's `gpu_backend`);
// elsewhere these tests are not compiled.
#![cfg(gpu_backend)]

mod common;

use std::sync::Arc;

use common::random_bytes;
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, result};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use treehash::gpu::DeviceBytes;
use treehash::standard::Family;
use treehash::{
    Algorithm, BackendChoice, BackendUsed, HashError, Hasher, HasherOptions, Params, TreeParams,
};

fn gpu_hasher() -> Hasher {
    let hasher = Hasher::new(HasherOptions::default().with_backend(BackendChoice::Gpu)).unwrap();
    hasher.gpu().expect("a usable CUDA GPU");
    hasher
}

fn cpu_hasher() -> Hasher {
    Hasher::new(HasherOptions::default().with_backend(BackendChoice::Cpu)).unwrap()
}

/// A CUDA stream of device 0's primary context, as a producer (CuPy,
/// PyTorch) would have one.
fn producer() -> Arc<CudaStream> {
    CudaContext::new(0).unwrap().new_stream().unwrap()
}

/// The start and size of the allocation that holds `ptr`, as the driver
/// tells them.
fn allocation_range(ptr: u64) -> (u64, usize) {
    use cudarc::driver::sys::{CUpointer_attribute, cuPointerGetAttribute};
    let (mut start, mut size) = (0u64, 0usize);
    // SAFETY: RANGE_START_ADDR writes a CUdeviceptr (u64) and RANGE_SIZE a
    // size_t, into the variables given, which are of those types.
    unsafe {
        let attribute = CUpointer_attribute::CU_POINTER_ATTRIBUTE_RANGE_START_ADDR;
        cuPointerGetAttribute((&raw mut start).cast(), attribute, ptr)
            .result()
            .unwrap();
        let attribute = CUpointer_attribute::CU_POINTER_ATTRIBUTE_RANGE_SIZE;
        cuPointerGetAttribute((&raw mut size).cast(), attribute, ptr)
            .result()
            .unwrap();
    }
    (start, size)
}

fn upload(stream: &Arc<CudaStream>, bytes: &[u8]) -> CudaSlice<u8> {
    // An empty allocation is not allowed: keep one byte more.
    let mut padded = bytes.to_vec();
    padded.push(0);
    let slice = stream.clone_htod(&padded).unwrap();
    stream.synchronize().unwrap();
    slice
}

/// The engine that hashes bytes already on the GPU: the GPU for an LI
/// tree, KT and ParallelHash; the CPU for TurboSHAKE, whose bytes are
/// copied to the host.
fn engine(params: &Params) -> BackendUsed {
    match params {
        Params::Standard(p) if p.standard().family() == Family::TurboShake => BackendUsed::Cpu,
        _ => BackendUsed::Gpu,
    }
}

/// Every known answer of tests/vectors/ that treehash computes (LI
/// vectors, plain SHA-3 as H = 0 trees, RFC 9861's and SP 800-185's
/// cases), from device memory, on the engine of its kind.
#[test]
#[ignore = "needs a CUDA GPU"]
fn device_inputs_reproduce_every_vector() {
    let (hasher, stream) = (gpu_hasher(), producer());
    for answer in common::known_answers() {
        let slice = upload(&stream, &answer.message);
        let out = hasher
            .hash_device_slice(&answer.params, &slice.slice(..answer.message.len()))
            .unwrap();
        assert_eq!(out.backend, engine(&answer.params), "{}", answer.what);
        let got = hex::encode(&out.digest[answer.skip..]);
        assert_eq!(got, answer.output, "{}", answer.what);
    }
}

/// The inputs of both kinds, from one buffer on the device: (parameters,
/// length, offset of the first byte). Random LI trees: sizes, heights (0
/// included), every function, block sizes, prefixes of every length
/// class, at a random offset mod 8; and every standard case of
/// `common::cases` at 0, 1, B ± 1, 40 chunks and 3 bytes and a random
/// length, at offsets 0, 1, 4 and 7.
fn device_cases(rng: &mut StdRng, buffer_len: usize) -> Vec<(Params, usize, usize)> {
    let mut cases = Vec::new();
    for round in 0..60 {
        let algorithm = Algorithm::ALL[round % Algorithm::ALL.len()];
        let height = [0, 1, 2, 4, 6, 8][rng.random_range(0..6)];
        let rate = algorithm.rate();
        let block = [None, Some(8), Some(rate * 2), Some(200)][rng.random_range(0..4)];
        let prefix_len = [0, 1, 7, 135, 255][rng.random_range(0..5)];
        let prefix = random_bytes(rng, prefix_len);
        let length = algorithm.is_xof().then(|| rng.random_range(1..300));
        let params = TreeParams::with_options(algorithm, height, 4, block, prefix, length).unwrap();
        // H = 0 is one warp: keep it short.
        let most = if height == 0 { 1 << 16 } else { buffer_len - 8 };
        let len = [0, 1, rate - 1, rate + 1, rng.random_range(0..most)][rng.random_range(0..5)];
        let offset = rng.random_range(0..8);
        cases.push((params.into(), len, offset));
    }
    for params in common::cases::standard_cases() {
        let b = params.block_size();
        let most = buffer_len - 8;
        let mut lens = vec![0, 1, b - 1, b, b + 1, 40 * b + 3, rng.random_range(0..most)];
        lens.retain(|&len| len <= most);
        for len in lens {
            for offset in [0, 1, 4, 7] {
                cases.push((params.clone().into(), len, offset));
            }
        }
    }
    cases
}

/// The inputs of [`device_cases`], from addresses at every offset mod 8
/// (the unaligned ones go through the aligned buffer): the host's digest,
/// the reference's up to 1 MiB, on the engine of its kind.
#[test]
#[ignore = "needs a CUDA GPU"]
fn device_inputs_equal_the_host_digest() {
    let (gpu, cpu, stream) = (gpu_hasher(), cpu_hasher(), producer());
    let mut rng = StdRng::seed_from_u64(24);
    let data = random_bytes(&mut rng, (3 << 20) + 64);
    let slice = upload(&stream, &data);
    for (params, len, offset) in device_cases(&mut rng, data.len()) {
        let input = &data[offset..offset + len];
        let what = format!("{params:?}, {len} bytes at +{offset}");
        let out = gpu
            .hash_device_slice(&params, &slice.slice(offset..offset + len))
            .unwrap();
        let want = cpu.hash_bytes(&params, input).unwrap().digest;
        assert_eq!(out.digest, want, "{what}");
        if len <= 1 << 20 {
            assert_eq!(
                out.digest,
                common::reference_digest(&params, input),
                "{what}"
            );
        }
        assert_eq!(out.backend, engine(&params), "{what}");
    }
    // Parameters of either kind go through the one entry point.
    let tree = Params::Tree(TreeParams::default());
    let out = gpu.hash_device_slice(&tree, &slice.slice(..1000)).unwrap();
    assert_eq!(
        out.digest,
        cpu.hash_bytes(&tree, &data[..1000]).unwrap().digest
    );
}

/// The producer's CUDA stream is waited for: bytes still being copied on it
/// when the call is made are hashed as they will be, not as they were.
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_producers_stream_is_waited_for() {
    let (gpu, cpu) = (gpu_hasher(), cpu_hasher());
    let stream = producer();
    let params = TreeParams::default();
    let mut rng = StdRng::seed_from_u64(7);
    let len = 256 << 20;
    let data = random_bytes(&mut rng, len);
    let want = cpu.hash_bytes(&params, &data).unwrap().digest;
    for round in 0..5 {
        let mut slice = stream.alloc_zeros::<u8>(len).unwrap();
        stream.synchronize().unwrap();
        // The copy is queued on the producer's CUDA stream; the host does not
        // wait.
        stream.memcpy_htod(&data, &mut slice).unwrap();
        let (ptr, _) = cudarc::driver::DevicePtr::device_ptr(&slice, &stream);
        let bytes = DeviceBytes {
            ptr,
            len,
            stream: Some(stream.cu_stream() as u64),
        };
        // SAFETY: `slice` lives and nothing else writes it until this returns.
        let out = unsafe { gpu.hash_device(&params, bytes) }.unwrap();
        assert_eq!(out.digest, want, "round {round}");
    }
}

/// Host memory, an address the driver does not know, and a range past the
/// end of its allocation (as the driver tells it: an allocation is rounded
/// up, to 2 MiB on the H200, so 1000 bytes asked for hold more) are GPU
/// errors, not digests.
#[test]
#[ignore = "needs a CUDA GPU"]
fn what_is_not_device_memory_is_refused() {
    let (gpu, stream) = (gpu_hasher(), producer());
    let params = TreeParams::default();
    let slice = upload(&stream, &[5u8; 1000]);
    let (ptr, _) = cudarc::driver::DevicePtr::device_ptr(&slice, &stream);
    let (start, size) = allocation_range(ptr);
    let end = start + size as u64;
    let host = vec![0u8; 4096];
    let cases = [
        (start, size + 1, "run past the end"),
        (end - 500, 600, "run past the end"),
        // Pageable host memory: unknown to the driver, or host memory where
        // the driver manages that too (HMM).
        (host.as_ptr() as u64, 100, "memory"),
    ];
    for (ptr, len, says) in cases {
        let bytes = DeviceBytes {
            ptr,
            len,
            stream: None,
        };
        // SAFETY: refused before any byte is read.
        match unsafe { gpu.hash_device(&params, bytes) } {
            Err(HashError::Gpu(e)) => assert!(e.contains(says), "{e}"),
            other => panic!("{ptr:#x}+{len}: {other:?}"),
        }
    }
    // SAFETY: never read; only its address is handed over, and refused.
    let pinned = unsafe { stream.context().alloc_pinned::<u8>(4096) }.unwrap();
    let bytes = DeviceBytes {
        ptr: pinned.as_slice().unwrap().as_ptr() as u64,
        len: 4096,
        stream: None,
    };
    // SAFETY: refused before any byte is read.
    match unsafe { gpu.hash_device(&params, bytes) } {
        Err(HashError::Gpu(e)) => assert!(e.contains("host memory"), "{e}"),
        other => panic!("pinned host memory: {other:?}"),
    }
}

/// The calling thread's current context is the one it had: none, or the
/// caller's own.
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_callers_current_context_is_kept() {
    let (gpu, stream) = (gpu_hasher(), producer());
    let params = TreeParams::default();
    let slice = upload(&stream, &[1u8; 100_000]);
    let view = slice.slice(..100_000);
    std::thread::scope(|s| {
        s.spawn(|| {
            // SAFETY: null unbinds; the contexts outlive the thread.
            unsafe { result::ctx::set_current(std::ptr::null_mut()) }.unwrap();
            gpu.hash_device_slice(&params, &view).unwrap();
            assert_eq!(result::ctx::get_current().unwrap(), None);
            let mine = stream.context().cu_ctx();
            // SAFETY: the primary context, retained by `stream`'s context.
            unsafe { result::ctx::set_current(mine) }.unwrap();
            gpu.hash_device_slice(&params, &view).unwrap();
            assert_eq!(result::ctx::get_current().unwrap(), Some(mine));
        });
    });
}
