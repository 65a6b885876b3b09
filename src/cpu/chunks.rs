//! The chaining values of a run of whole chunks, for the standard parallel
//! hashes (issue #23): each chunk goes through a sponge of its own, and the
//! first `c` bytes of each sponge's output are written one after another.
//! The sponge is a [`SpongeSpec`]: KT128 and KT256 (RFC 9861) hash each
//! 8192-byte chunk with TurboSHAKE (Keccak-p[1600, 12], domain byte 0x0B);
//! ParallelHash128 and 256 (SP 800-185) each B-byte block with cSHAKE of
//! empty N and S, which is SHAKE (Keccak-f\[1600\], domain byte 0x1F).
//!
//! All chunks of a run have one length, so the same block of each lies at
//! one stride: eight chunks share an AVX-512 permutation, four an AVX2 one
//! and two an ARMv8.2 SHA3 one (`keccak_x8`, `keccak_x4`, `keccak_x2`), and what is left over goes to the
//! narrower kernels, the last ones through the scalar permutation. The last
//! block of each chunk (its last bytes, the domain byte and the padding's
//! final bit) is built in a small buffer, so the kernels only ever absorb
//! whole blocks.
//!
//! Public (but hidden) only so that benches/cpu.rs can time it: not part of
//! the crate's API.

use super::CpuPath;
#[cfg(any(
    target_arch = "x86_64",
    all(target_arch = "aarch64", target_endian = "little")
))]
use super::platform::LaneKernel;
use super::platform::{ChunkKernels, OneState, Platform, each_chunk_kernel};
use crate::error::HashError;
use crate::sponge::{MAX_RATE, SpongeSpec};

/// Writes the first `spec.output_len()` bytes of each chunk's sponge output
/// to `out`, in chunk order: `chunks` holds `out.len() / spec.output_len()`
/// chunks of `chunk_len` bytes (0 or more) back to back. Runs on `path`; an
/// error if this CPU lacks what it needs.
///
/// # Panics
///
/// If `out` is not a whole number of outputs or `chunks` not that many chunks.
pub fn chaining_values(
    path: CpuPath,
    spec: &SpongeSpec,
    chunks: &[u8],
    chunk_len: usize,
    out: &mut [u8],
) -> Result<(), HashError> {
    chaining_values_on(Platform::new(path)?, spec, chunks, chunk_len, out);
    Ok(())
}

/// [`chaining_values`] on a platform already chosen.
pub(crate) fn chaining_values_on(
    platform: Platform,
    spec: &SpongeSpec,
    chunks: &[u8],
    chunk_len: usize,
    out: &mut [u8],
) {
    let c = spec.output_len();
    assert!(out.len().is_multiple_of(c), "whole outputs");
    let count = out.len() / c;
    assert_eq!(
        Some(chunks.len()),
        count.checked_mul(chunk_len),
        "whole chunks"
    );
    let (chunks, out) = hash_wide(platform.chunk_kernels(), spec, chunks, chunk_len, out);
    let one_state = platform.one_state();
    for (j, cv) in out.chunks_exact_mut(c).enumerate() {
        hash_one(
            one_state,
            spec,
            &chunks[j * chunk_len..(j + 1) * chunk_len],
            cv,
        );
    }
}

/// Hashes the chunks that the platform's SIMD kernels take, widest kernel
/// first, `W` chunks at a time: the chunks and outputs left over.
#[cfg_attr(
    not(any(
        target_arch = "x86_64",
        all(target_arch = "aarch64", target_endian = "little")
    )),
    allow(unused_mut)
)]
fn hash_wide<'c, 'o>(
    kernels: ChunkKernels,
    spec: &SpongeSpec,
    mut chunks: &'c [u8],
    chunk_len: usize,
    mut out: &'o mut [u8],
) -> (&'c [u8], &'o mut [u8]) {
    each_chunk_kernel!(kernels, |kernel, W| {
        (chunks, out) = hash_groups::<_, W>(kernel, spec, chunks, chunk_len, out);
    });
    let _ = (spec, chunk_len); // no SIMD kernel elsewhere
    (chunks, out)
}

/// Hashes the chunks `W` at a time with `kernel` while at least `W` are
/// left: the chunks and outputs left over.
#[cfg(any(
    target_arch = "x86_64",
    all(target_arch = "aarch64", target_endian = "little")
))]
fn hash_groups<'c, 'o, K: LaneKernel<W>, const W: usize>(
    kernel: K,
    spec: &SpongeSpec,
    chunks: &'c [u8],
    chunk_len: usize,
    out: &'o mut [u8],
) -> (&'c [u8], &'o mut [u8]) {
    let c = spec.output_len();
    let groups = out.len() / c / W;
    let (group_chunks, rest_chunks) = chunks.split_at(groups * W * chunk_len);
    let (group_out, rest_out) = out.split_at_mut(groups * W * c);
    let whole = chunk_len - chunk_len % spec.rate();
    for (g, cvs) in group_out.chunks_exact_mut(W * c).enumerate() {
        let run = &group_chunks[g * W * chunk_len..(g + 1) * W * chunk_len];
        let mut group = [[0u64; W]; 25];
        kernel.absorb_blocks(&mut group, run, chunk_len, whole, spec);
        let last: [[u8; MAX_RATE]; W] = std::array::from_fn(|i| {
            last_block(spec, &run[i * chunk_len + whole..(i + 1) * chunk_len])
        });
        kernel.absorb_blocks(&mut group, last.as_flattened(), MAX_RATE, spec.rate(), spec);
        for (i, cv) in cvs.chunks_exact_mut(c).enumerate() {
            squeeze(|k| group[k][i], cv);
        }
    }
    (rest_chunks, rest_out)
}

/// One chunk's output, with the platform's one-state permutation.
fn hash_one(kernel: OneState, spec: &SpongeSpec, chunk: &[u8], cv: &mut [u8]) {
    let mut state = [0u64; 25];
    let (rate, rounds) = (spec.rate(), spec.rounds());
    let tail = kernel.absorb_blocks(&mut state, chunk, rate, rounds);
    let last = last_block(spec, &chunk[chunk.len() - tail..]);
    kernel.absorb_blocks(&mut state, &last[..rate], rate, rounds);
    squeeze(|k| state[k], cv);
}

/// A chunk's last block: its last `tail` bytes (fewer than the rate), the
/// domain byte after them and pad10*1's final bit in the rate's last byte.
fn last_block(spec: &SpongeSpec, tail: &[u8]) -> [u8; MAX_RATE] {
    let mut block = [0u8; MAX_RATE];
    block[..tail.len()].copy_from_slice(tail);
    block[tail.len()] ^= spec.domain();
    block[spec.rate() - 1] ^= 0x80;
    block
}

/// Writes `out` (at most a rate) from a permuted state whose lane k is `lane(k)`.
fn squeeze(lane: impl Fn(usize) -> u64, out: &mut [u8]) {
    for (k, bytes) in out.chunks_mut(8).enumerate() {
        bytes.copy_from_slice(&lane(k).to_le_bytes()[..bytes.len()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sponge::Rounds;
    use crate::standard::Standard;
    use shake::{ExtendableOutput, Shake128, Shake256};
    use turboshake::{CTurboShake128, CTurboShake256};

    const KT128: SpongeSpec = Standard::Kt128.chunk_spec().unwrap();

    /// Every path this CPU can run (on x86-64 CI, AVX2 and AVX-512 must be
    /// there: see `require`).
    fn paths() -> Vec<CpuPath> {
        [CpuPath::Portable, CpuPath::Avx2, CpuPath::Avx512]
            .into_iter()
            .filter(|&path| Platform::new(path).is_ok())
            .collect()
    }

    /// The output of one chunk by an independent implementation: RustCrypto's
    /// TurboSHAKE or SHAKE, by the spec's rounds, rate and domain byte.
    type Oracle = fn(&[u8], &mut [u8]);

    fn oracle(spec: &SpongeSpec) -> Oracle {
        fn xof<H: ExtendableOutput + Default>(data: &[u8], out: &mut [u8]) {
            H::digest_xof(data, out);
        }
        fn turbo_xof<H: turboshake::digest::ExtendableOutput + Default>(
            data: &[u8],
            out: &mut [u8],
        ) {
            H::digest_xof(data, out);
        }
        match (spec.rounds(), spec.rate(), spec.domain()) {
            (Rounds::Keccak24, 168, 0x1F) => xof::<Shake128>,
            (Rounds::Keccak24, 136, 0x1F) => xof::<Shake256>,
            (Rounds::Turbo12, 168, 0x0B) => turbo_xof::<CTurboShake128<0x0B>>,
            (Rounds::Turbo12, 136, 0x0B) => turbo_xof::<CTurboShake256<0x0B>>,
            (Rounds::Turbo12, 168, 0x01) => turbo_xof::<CTurboShake128<0x01>>,
            (Rounds::Turbo12, 136, 0x7F) => turbo_xof::<CTurboShake256<0x7F>>,
            (Rounds::Turbo12, 168, 0x1F) => turbo_xof::<CTurboShake128<0x1F>>,
            _ => unreachable!("no oracle for {spec:?}"),
        }
    }

    /// The standard specs, custom domain bytes (the lowest, the highest)
    /// and outputs shorter than a word or as long as the rate.
    fn specs() -> Vec<SpongeSpec> {
        let standard = Standard::ALL.iter().filter_map(|s| s.chunk_spec());
        standard
            .chain([
                SpongeSpec::new(Rounds::Turbo12, 168, 0x01, 5),
                SpongeSpec::new(Rounds::Turbo12, 136, 0x7F, 136),
                SpongeSpec::new(Rounds::Turbo12, 168, 0x1F, 168),
            ])
            .collect()
    }

    /// splitmix64 bytes, so that each chunk differs.
    fn bytes(len: usize, seed: u64) -> Vec<u8> {
        let mut x = seed;
        (0..len)
            .map(|_| {
                x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = x;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                (z ^ (z >> 31)) as u8
            })
            .collect()
    }

    /// Each chunk length on `path`, with 1 to 17 chunks (every count of
    /// chunks left over after the groups of eight and four), the run
    /// starting at an odd address, against the oracle chunk by chunk.
    fn check(path: CpuPath, spec: &SpongeSpec, chunk_lens: &[usize]) {
        let oracle = oracle(spec);
        let c = spec.output_len();
        const MAX_COUNT: usize = 17;
        for &chunk_len in chunk_lens {
            let data = bytes(1 + MAX_COUNT * chunk_len, chunk_len as u64);
            let all = &data[1..];
            let want: Vec<u8> = (0..MAX_COUNT)
                .flat_map(|j| {
                    let mut cv = vec![0u8; c];
                    oracle(&all[j * chunk_len..(j + 1) * chunk_len], &mut cv);
                    cv
                })
                .collect();
            for count in 1..=MAX_COUNT {
                let mut got = vec![0u8; count * c];
                chaining_values(path, spec, &all[..count * chunk_len], chunk_len, &mut got)
                    .unwrap();
                assert!(
                    got == want[..count * c],
                    "{spec:?}, {path}, {count} chunks of {chunk_len} bytes"
                );
            }
        }
    }

    /// Every spec on `path`, short chunks and KT-sized ones.
    fn check_path(path: CpuPath) {
        for spec in specs() {
            check(path, &spec, &short_lens(&spec));
        }
        for spec in [Standard::Kt128, Standard::Kt256, Standard::ParallelHash256]
            .map(|s| s.chunk_spec().unwrap())
        {
            check(path, &spec, &[8191, 8192, 8193, 20000]);
        }
    }

    /// Lengths around the rate and the word.
    fn short_lens(spec: &SpongeSpec) -> Vec<usize> {
        let r = spec.rate();
        vec![0, 1, 7, 8, 9, r - 9, r - 1, r, r + 1, 2 * r + 5]
    }

    #[test]
    fn portable_chunks_match_turboshake_and_shake() {
        check_path(CpuPath::Portable);
    }

    /// `Auto` on aarch64 with SHA3 is the two-lane SHA3 kernel.
    #[test]
    #[cfg(all(target_arch = "aarch64", target_endian = "little"))]
    #[cfg_attr(
        not(treehash_test_sha3),
        ignore = "the CPU that built this test has no SHA3 (build.rs)"
    )]
    fn sha3_chunks_match_turboshake_and_shake() {
        let sha3 = super::super::platform::sha3_for_test("sha3_chunks_match_turboshake_and_shake")
            .expect("sha3_for_test fails where this test runs without SHA3");
        assert!(
            Platform::new(CpuPath::Auto)
                .ok()
                .and_then(|p| p.chunk_kernels().x2)
                .is_some()
        );
        let _ = sha3;
        check_path(CpuPath::Auto);
    }

    #[test]
    #[cfg_attr(
        not(treehash_test_avx2),
        ignore = "the CPU that built this test has no AVX2 (build.rs)"
    )]
    fn avx2_chunks_match_turboshake_and_shake() {
        check_path(CpuPath::Avx2);
    }

    #[test]
    #[cfg_attr(
        not(treehash_test_avx512),
        ignore = "the CPU that built this test has no AVX-512F (build.rs)"
    )]
    fn avx512_chunks_match_turboshake_and_shake() {
        check_path(CpuPath::Avx512);
    }

    #[test]
    fn no_chunks_no_output() {
        for path in paths() {
            let mut out = [];
            chaining_values(path, &KT128, &[], 8192, &mut out).unwrap();
            chaining_values(path, &KT128, &[], 0, &mut out).unwrap();
        }
    }

    #[test]
    #[should_panic(expected = "whole chunks")]
    fn a_short_run_is_refused() {
        let mut out = [0u8; 64];
        let _ = chaining_values(CpuPath::Portable, &KT128, &[0; 99], 50, &mut out);
    }
}
