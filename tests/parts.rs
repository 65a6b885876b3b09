//! Parts and joins (docs/SPEC.md, "Parts and joins" and "Parts of the
//! standard functions"), for both kinds of function: LI trees and the
//! standard functions that have a tree (KT128, KT256, ParallelHash128 and
//! ParallelHash256; TurboSHAKE has none). Any split of any file joins to
//! the digest of one process, of the reference (`treehash_reference`) and
//! of the known answers; each part owns the leaves or chunks the spec gives
//! it and a standard part reads only its chunks' bytes; the format is the
//! one the spec states; and every broken set is refused with the problem
//! named. If you add a test of parts made and joined through the library,
//! it goes here (parts no honest treehash makes are in hostile_parts.rs,
//! `treehash part` and `join` in cli_parts.rs).

mod common;

use common::parts::{hasher, other_files, refused, write};
use common::reference_node;

use std::ops::Range;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use sha3::Digest;
use treehash::parts::{JoinError, NameRule, Part, PartError, join, join_bytes, part_leaves};
use treehash::standard::{Family, Standard, StandardParams};
use treehash::{Algorithm, BackendChoice, BackendUsed, Hasher, HasherOptions, Params, TreeParams};
use treehash_reference::{Node, kangaroo, node_function, turboshake};

// ------------------------------------------------------------------- helpers

/// n, what a split divides: an LI tree's L leaves, or a standard function's
/// chunks of its string (KT's S = M ‖ C ‖ length_encode(|C|), ParallelHash's
/// X).
fn unit_count(params: &Params, file_len: u64) -> u64 {
    match params {
        Params::Tree(p) => p.leaf_count(),
        Params::Standard(p) => {
            let c = p.customization();
            let s_len = match p.standard().family() {
                Family::Kangaroo => {
                    file_len + c.len() as u64 + kangaroo::length_encode(c.len() as u64).len() as u64
                }
                _ => file_len,
            };
            s_len.div_ceil(p.block_size() as u64)
        }
    }
}

/// The leaves or chunks the spec gives part `index` of `count`:
/// [⌊I·n/N⌋, ⌊(I+1)·n/N⌋).
fn own(units: u64, count: u64, index: u64) -> Range<u64> {
    index * units / count..(index + 1) * units / count
}

/// Every part of a split of `count`, as bytes; checks that each owns the
/// leaves or chunks the spec gives it, and that each standard part reads
/// its chunks' bytes of the file and all of them read it once.
fn parts(hasher: &Hasher, params: &Params, path: &Path, count: u64) -> Vec<Vec<u8>> {
    let file_len = std::fs::metadata(path).unwrap().len();
    let units = unit_count(params, file_len);
    let mut read = 0;
    let set = (0..count)
        .map(|index| {
            let out = hasher
                .hash_part(params, path, index, count, &())
                .unwrap_or_else(|e| panic!("{}: part {index} of {count}: {e}", params.label()));
            let part = &out.part;
            assert_eq!(part.index(), index);
            let own = own(units, count, index);
            assert_eq!(part.leaves(), own, "{}", params.label());
            if let Params::Standard(p) = params {
                // Chunks [a, e), their bytes of the file.
                let in_file = |c: u64| (c * p.block_size() as u64).min(file_len);
                assert_eq!(out.bytes_read, in_file(own.end) - in_file(own.start));
            }
            read += out.bytes_read;
            part.to_bytes()
        })
        .collect();
    if let Params::Standard(p) = params {
        assert_eq!(read, file_len, "{}: the file read once", p.label());
    }
    set
}

/// The parameters a join gives back: those of the parts, without an LI
/// prefix (no part records it).
fn without_prefix(params: &Params) -> Params {
    match params {
        Params::Tree(p) => TreeParams::with_options(
            p.algorithm(),
            p.height(),
            p.degree(),
            Some(p.block_size()),
            Vec::new(),
            Some(p.output_len()),
        )
        .unwrap()
        .into(),
        other => other.clone(),
    }
}

/// The split of a file of `len` bytes under `params` into `count` parts.
fn split(params: &Params, len: usize, count: u64) -> (tempfile::TempDir, Vec<Vec<u8>>) {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "file", &common::spec_input(len));
    let set = parts(&hasher(1 << 16), params, &path, count);
    (dir, set)
}

/// The field that `refused` names for a part of `set` swapped for `other`
/// (the first part is the one the others are compared with: a first part
/// swapped is named by the second).
fn differs(set: &[Vec<u8>], at: usize, other: Vec<u8>) -> &'static str {
    let mut mixed = set.to_vec();
    mixed[at] = other;
    match refused(&mixed) {
        JoinError::Differs { what, at: a, .. } if a == at.max(1) => what,
        e => panic!("{e}"),
    }
}

fn tree(algorithm: Algorithm, height: u32, degree: u64) -> Params {
    TreeParams::new(algorithm, height, degree).unwrap().into()
}

fn kt(standard: Standard, c: &[u8], n: usize) -> Params {
    StandardParams::new(standard)
        .with_customization(c.to_vec())
        .unwrap()
        .with_output_len(n)
        .unwrap()
        .into()
}

fn ph(standard: Standard, b: usize, s: &[u8], n: usize) -> Params {
    StandardParams::new(standard)
        .with_block_size(b)
        .unwrap()
        .with_customization(s.to_vec())
        .unwrap()
        .with_output_len(n)
        .unwrap()
        .into()
}

fn standard(standard: Standard) -> Params {
    StandardParams::new(standard).into()
}

// ------------------------------------------------------ the splits, of both kinds

/// A random valid parameter set of `algorithm` with at most `max_leaves` leaves.
fn random_tree(rng: &mut StdRng, algorithm: Algorithm, max_leaves: u64) -> TreeParams {
    let (height, degree) = loop {
        let height = rng.random_range(0..=6u32);
        let degree = rng.random_range(2..=9u64);
        if degree.checked_pow(height).is_some_and(|l| l <= max_leaves) {
            break (height, degree);
        }
    };
    let block_size = match rng.random_range(0..4) {
        0 => None,
        1 => Some(8),
        2 => Some(algorithm.rate() * rng.random_range(1..=3usize)),
        _ => Some(8 * rng.random_range(1..=48usize)),
    };
    let prefix_len = match rng.random_range(0..3) {
        0 => rng.random_range(1..=255usize),
        _ => 0,
    };
    let prefix = (0..prefix_len).map(|_| rng.random()).collect();
    let output_len = algorithm.is_xof().then(|| rng.random_range(1..=300usize));
    TreeParams::with_options(algorithm, height, degree, block_size, prefix, output_len).unwrap()
}

/// An LI part count: one, the leaf count, more than the leaves, one that
/// does not divide them, or any.
fn random_count(rng: &mut StdRng, leaf_count: u64) -> u64 {
    match rng.random_range(0..6) {
        0 => 1,
        1 => leaf_count,
        2 => leaf_count + rng.random_range(1..=5),
        3 => loop {
            let n = rng.random_range(2..=leaf_count.clamp(2, 40) + 1);
            if !leaf_count.is_multiple_of(n) {
                break n;
            }
        },
        _ => rng.random_range(1..=leaf_count.min(40) + 2),
    }
}

/// An LI file size near a boundary that matters: empty, tiny, around a
/// block or a stripe, or several stripes.
fn random_size(rng: &mut StdRng, params: &TreeParams) -> usize {
    let stripe = params.stripe_len() as usize;
    let jitter = rng.random_range(0..=2usize);
    let base = match rng.random_range(0..5) {
        0 => return rng.random_range(0..3),
        1 => params.block_size(),
        2 => stripe,
        3 => stripe * rng.random_range(2..=4usize),
        _ => return rng.random_range(0..=3 * stripe.min(30_000)),
    };
    (base + jitter).saturating_sub(1)
}

/// Each standard function with a tree, with its defaults and with the
/// options it takes: KT with a short C and with one that spills into
/// chunks of its own (9000 bytes), ParallelHash with small blocks (1, 7,
/// 136), its default 8192 and an S.
fn standard_cases() -> Vec<Params> {
    vec![
        standard(Standard::Kt128),
        kt(Standard::Kt128, b"C", 7),
        kt(Standard::Kt256, &[0x5a; 9000], 64),
        kt(Standard::Kt256, b"", 100),
        ph(Standard::ParallelHash128, 1, b"", 32),
        ph(Standard::ParallelHash128, 7, b"S", 20),
        ph(Standard::ParallelHash256, 136, b"", 64),
        standard(Standard::ParallelHash256),
        ph(Standard::ParallelHash128, 8192, &[3; 300], 32),
    ]
}

/// Standard file sizes around the chunks' boundaries: empty, one byte, B ±
/// 1 and a few chunks ± 1 (for KT, 8192 and the sizes where S crosses a
/// chunk boundary), kept under about 60 KB.
fn standard_sizes(params: &StandardParams) -> Vec<usize> {
    let b = params.block_size();
    let mut sizes = vec![0, 1, b - 1, b, b + 1, 2 * b - 1, 3 * b + 1, 5 * b];
    if params.standard().family() == Family::Kangaroo {
        let c = params.customization().len();
        let suffix = c + kangaroo::length_encode(c as u64).len();
        sizes.extend([8191, 8192, 8193, 3 * 8192 - 1]);
        // S of exactly one and two chunks, and one byte more.
        for whole in [8192usize, 2 * 8192] {
            if let Some(len) = whole.checked_sub(suffix) {
                sizes.extend([len, len + 1]);
            }
        }
    }
    sizes.retain(|&s| s <= 60_000);
    sizes.sort_unstable();
    sizes.dedup();
    sizes
}

/// Standard part counts for n chunks: one, n, more than n, one that does
/// not divide n, or any; at most 40 parts.
fn standard_counts(rng: &mut StdRng, n: u64) -> Vec<u64> {
    let mut counts = vec![1, n.clamp(1, 40), n.min(35) + rng.random_range(1..=5)];
    if n > 2 {
        let odd = (2..=n.min(40)).find(|k| !n.is_multiple_of(*k) && rng.random_bool(0.5));
        counts.extend(odd);
    }
    counts.push(rng.random_range(2..=40));
    counts.sort_unstable();
    counts.dedup();
    counts
}

/// A file to split, the counts to split it into, and the pieces to hash it in.
struct Split {
    params: Params,
    data: Vec<u8>,
    counts: Vec<u64>,
    piece: usize,
}

/// The one list of splits of both kinds: `li_rounds` random LI trees of
/// each function (at most `max_leaves` leaves; files at a block's or a
/// stripe's edges; one random count, at most `max_count`), and every case
/// of [`standard_cases`] at each of its [`standard_sizes`] with several
/// counts. Pieces of a few blocks or chunks: a part's leaves and chunks
/// cross them.
fn splits(rng: &mut StdRng, li_rounds: usize, max_leaves: u64, max_count: u64) -> Vec<Split> {
    let mut splits = Vec::new();
    for algorithm in Algorithm::ALL {
        for _ in 0..li_rounds {
            let params = random_tree(rng, algorithm, max_leaves);
            let len = random_size(rng, &params);
            let data: Vec<u8> = (0..len).map(|_| rng.random()).collect();
            let count = random_count(rng, params.leaf_count()).min(max_count);
            let piece = params.block_size() * rng.random_range(1..=40usize);
            splits.push(Split {
                params: params.into(),
                data,
                counts: vec![count],
                piece,
            });
        }
    }
    for params in standard_cases() {
        let Params::Standard(p) = &params else {
            unreachable!()
        };
        for len in standard_sizes(p) {
            let data: Vec<u8> = (0..len).map(|_| rng.random()).collect();
            let n = unit_count(&params, len as u64);
            let counts = standard_counts(rng, n);
            let piece = p.block_size().max(8192) * rng.random_range(1..=4);
            splits.push(Split {
                params: params.clone(),
                data,
                counts,
                piece,
            });
        }
    }
    splits
}

/// Every split of the one list, on `hasher` where given (else on one of
/// the split's pieces): the parts, shuffled, join to the reference's
/// digest and to the one process's, with the file's size, the count, the
/// key flag, the parameters and the label. Returns how many sets were joined.
fn join_every_split(splits: &[Split], hasher: Option<&Hasher>, what: &str) -> usize {
    let mut rng = StdRng::seed_from_u64(99);
    let dir = tempfile::tempdir().unwrap();
    let mut joined_sets = 0;
    for (k, split) in splits.iter().enumerate() {
        let params = &split.params;
        let len = split.data.len();
        let path = write(dir.path(), &format!("f{k}"), &split.data);
        let own_hasher;
        let hasher = match hasher {
            Some(h) => h,
            None => {
                own_hasher = common::parts::hasher(split.piece);
                &own_hasher
            }
        };
        let want = common::reference_digest(params, &split.data);
        let one = hasher.hash_path(params, &path, &()).unwrap();
        assert_eq!(one.digest, want, "{what}: {}, {len} bytes", params.label());
        for &count in &split.counts {
            let label = format!("{what}: {}, {len} bytes, {count} parts", params.label());
            let mut set = parts(hasher, params, &path, count);
            set.shuffle(&mut rng);
            let joined =
                join_bytes(&set, NameRule::default()).unwrap_or_else(|e| panic!("{label}: {e}"));
            assert_eq!(hex::encode(&joined.digest), hex::encode(&want), "{label}");
            assert_eq!(joined.params, without_prefix(params), "{label}");
            assert_eq!(joined.label().to_string(), params.label(), "{label}");
            assert_eq!((joined.file_len, joined.parts), (len as u64, count));
            assert_eq!(joined.keyed, params.keyed(), "{label}");
            joined_sets += 1;
        }
    }
    joined_sets
}

// ------------------------------------------------------------------- joins

/// The one list of splits, on the hasher's own CPU path: 25 random trees of
/// each LI function, and each standard case at each of its sizes.
#[test]
fn every_split_joins_to_the_one_process_digest_and_the_reference() {
    let mut rng = StdRng::seed_from_u64(25);
    let splits = splits(&mut rng, 25, 512, u64::MAX);
    let li = splits
        .iter()
        .filter(|s| matches!(s.params, Params::Tree(_)))
        .count();
    assert_eq!(li, 150);
    let joined = join_every_split(&splits, None, "auto path");
    assert!(joined > 150 + 300, "{joined} splits");
}

/// Every known answer that a part can hold (the LI vectors, computed by
/// the spec's other implementations, OpenSSL's plain digests as H = 0
/// trees, RFC 9861's KT and SP 800-185's ParallelHash), each split several
/// ways, into more parts than leaves or chunks too where that is quick.
#[test]
fn split_known_answers_join_to_their_digests() {
    let dir = tempfile::tempdir().unwrap();
    let hasher = hasher(1 << 12);
    let mut checked = 0;
    for (k, answer) in common::known_answers().iter().enumerate() {
        if answer.params.unsplittable().is_some() {
            continue; // TurboSHAKE
        }
        let path = write(dir.path(), &format!("v{k}"), &answer.message);
        let units = unit_count(&answer.params, answer.message.len() as u64);
        let mut counts = vec![2, 3, 7];
        if units <= 256 {
            counts.push(units + 1);
        }
        for count in counts {
            let joined = join_bytes(
                &parts(&hasher, &answer.params, &path, count),
                NameRule::default(),
            )
            .unwrap();
            assert_eq!(
                hex::encode(&joined.digest[answer.skip..]),
                answer.output,
                "{}, {count} parts",
                answer.what
            );
        }
        checked += 1;
    }
    assert!(checked >= 200, "only {checked} known answers split");
}

/// Large files whose parts span many pieces (of 64 KiB): LI trees of 2^12
/// to 2^16 leaves split at and off subtree boundaries, with files that
/// fill every leaf, half of them, or a few; KT over 3 MB; ParallelHash
/// with B = 136 and, with B = 1, many waves of chaining values.
#[test]
fn large_files_split_many_ways() {
    let dir = tempfile::tempdir().unwrap();
    let hasher = hasher(1 << 16);
    let li_counts = vec![1, 2, 3, 16, 100];
    let cases = [
        (
            tree(Algorithm::Sha3_256, 8, 4),
            2 * 65536 * 136 + 99,
            li_counts.clone(),
        ),
        (
            tree(Algorithm::Shake128, 12, 2),
            4096 * 168 / 2 + 5,
            li_counts.clone(),
        ),
        // Few leaves hold a block: into more parts than leaves too.
        (
            tree(Algorithm::Sha3_512, 6, 4),
            3000,
            vec![1, 2, 3, 16, 100, 4097],
        ),
        (standard(Standard::Kt128), 3_000_017, vec![1, 3, 16]),
        (standard(Standard::Kt256), 1_000_000, vec![1, 3, 16]),
        (
            ph(Standard::ParallelHash128, 136, b"", 32),
            2_000_003,
            vec![1, 3, 16],
        ),
        (
            ph(Standard::ParallelHash256, 1, b"", 64),
            300_001,
            vec![1, 3, 16],
        ),
    ];
    for (params, len, counts) in cases {
        let data = common::spec_input(len);
        let path = write(dir.path(), "big", &data);
        let want = common::reference_digest(&params, &data);
        for count in counts {
            let joined =
                join_bytes(&parts(&hasher, &params, &path, count), NameRule::default()).unwrap();
            assert_eq!(joined.digest, want, "{}, {count} parts", params.label());
        }
    }
}

/// More parts than leaves or chunks: the parts past them own none and read
/// nothing. A file shorter than a stripe leaves the last parts' leaves
/// empty; height 0 is a tree of one leaf, which one part owns. An empty
/// file under KT is one chunk (C ‖ length_encode(|C|)), held whole by the
/// part that owns it; under ParallelHash it has none.
#[test]
fn more_parts_than_leaves_or_chunks_and_short_files() {
    let dir = tempfile::tempdir().unwrap();
    let hasher = hasher(4096);
    let keyed = TreeParams::with_options(Algorithm::Sha3_256, 2, 4, None, vec![5; 200], None);
    let long_c = kt(Standard::Kt128, &[7; 20_000], 32);
    for (params, len, count) in [
        (tree(Algorithm::Sha3_384, 0, 4), 1000, 3),
        (tree(Algorithm::Sha3_384, 0, 4), 0, 2),
        (tree(Algorithm::Sha3_256, 2, 4), 200, 40),
        (tree(Algorithm::Sha3_256, 2, 4), 0, 1),
        (tree(Algorithm::Sha3_256, 2, 4), 0, 7),
        (keyed.unwrap().into(), 0, 7),
        (standard(Standard::Kt128), 0, 3),
        (standard(Standard::Kt256), 100, 2),
        (long_c.clone(), 0, 5),
        (long_c, 10, 2),
        (standard(Standard::ParallelHash128), 0, 4),
        (standard(Standard::ParallelHash256), 9000, 7),
    ] {
        let data = common::spec_input(len);
        let path = write(dir.path(), "f", &data);
        let what = format!("{}, {len} bytes, {count} parts", params.label());
        let outs: Vec<_> = (0..count)
            .map(|i| hasher.hash_part(&params, &path, i, count, &()).unwrap())
            .collect();
        for out in &outs {
            if out.part.leaves().is_empty() {
                assert_eq!((out.bytes_read, out.part.value_count()), (0, 0), "{what}");
            }
        }
        let read: u64 = outs.iter().map(|o| o.bytes_read).sum();
        assert_eq!(read, len as u64, "{what}");
        let set: Vec<Part> = outs.into_iter().map(|o| o.part).collect();
        let joined = join(&set, NameRule::default()).unwrap();
        assert_eq!(
            joined.digest,
            common::reference_digest(&params, &data),
            "{what}"
        );
    }
}

/// Random splits of both kinds with the hasher forced onto `path`: its
/// leaf or chunk engine and its parent levels' engine (the subtrees of
/// each part) against the reference. A CPU that lacks the path fails the
/// test; the tests of a path this build does not test are ignored instead.
fn parts_on_path(path: treehash::CpuPath, seed: u64) {
    let hasher = Hasher::new(
        HasherOptions::default()
            .with_backend(BackendChoice::Cpu)
            .with_cpu_path(path)
            .with_threads(Some(2))
            .with_piece_bytes(Some(1 << 14)),
    )
    .unwrap_or_else(|e| panic!("the {path} path: {e}"));
    let splits = splits(&mut StdRng::seed_from_u64(seed), 6, 4096, 64);
    join_every_split(&splits, Some(&hasher), &format!("{path}"));
}

#[test]
fn parts_on_the_portable_path() {
    parts_on_path(treehash::CpuPath::Portable, 31);
}

#[test]
#[cfg_attr(
    not(treehash_test_avx2),
    ignore = "the CPU that built this test has no AVX2 (build.rs)"
)]
fn parts_on_the_avx2_path() {
    parts_on_path(treehash::CpuPath::Avx2, 32);
}

#[test]
#[cfg_attr(
    not(treehash_test_avx512),
    ignore = "the CPU that built this test has no AVX-512F (build.rs)"
)]
fn parts_on_the_avx512_path() {
    parts_on_path(treehash::CpuPath::Avx512, 33);
}

/// Whether `out`, a part hashed under `--backend gpu`, must have been
/// hashed on the GPU: an LI part that read any byte; a standard part that
/// read at least four chunks' bytes, and owns more than two chunks (whole
/// chunks of the file beyond KT's first go to the GPU).
fn on_the_gpu(params: &Params, out: &treehash::parts::PartOutput) -> bool {
    match params {
        Params::Standard(p) => {
            let chunks = out.part.leaves();
            out.bytes_read >= 4 * p.block_size() as u64 && chunks.end - chunks.start > 2
        }
        _ => out.bytes_read > 0,
    }
}

/// Parts hashed on the GPU (`--backend gpu`): the engine owns the part's
/// leaves or chunks and reads only their bytes; the sets join to the
/// reference. Random LI splits with each leaf kernel (the default choice,
/// thread per leaf, warp per leaf), and every standard case at sizes from 0
/// to 3 MB with the default one (the leaf kernel is the LI tree's). Needs a
/// CUDA GPU: `cargo test --release --test parts -- --ignored` on the GPU
/// machine.
#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_parts_join_to_the_reference() {
    use treehash::gpu::LeafKernel;
    let mut rng = StdRng::seed_from_u64(2525);
    let dir = tempfile::tempdir().unwrap();
    let kernels = [
        None,
        Some(LeafKernel::ThreadPerLeaf),
        Some(LeafKernel::WarpPerLeaf),
    ];
    let hashers = kernels.map(|kernel| {
        let hasher = Hasher::new(
            HasherOptions::default()
                .with_backend(BackendChoice::Gpu)
                .with_piece_bytes(Some(1 << 16))
                .with_gpu_leaf_kernel(kernel),
        )
        .unwrap();
        hasher.gpu().expect("a usable CUDA GPU");
        hasher
    });
    // (the hasher, the parameters, the file's size, the part counts)
    let mut runs: Vec<(usize, Params, usize, Vec<u64>)> = Vec::new();
    for k in 0..kernels.len() {
        for algorithm in Algorithm::ALL {
            for _ in 0..6 {
                let params = random_tree(&mut rng, algorithm, 4096);
                let len = random_size(&mut rng, &params);
                let count = random_count(&mut rng, params.leaf_count());
                runs.push((k, params.into(), len, vec![count]));
            }
        }
    }
    for params in standard_cases() {
        for len in [0, 1, 8193, 200_001, 3_000_000] {
            let counts = standard_counts(&mut rng, unit_count(&params, len as u64));
            runs.push((0, params.clone(), len, counts));
        }
    }
    for (k, params, len, counts) in runs {
        let (hasher, kernel) = (&hashers[k], kernels[k]);
        let data: Vec<u8> = (0..len).map(|_| rng.random()).collect();
        let path = write(dir.path(), "g", &data);
        let want = common::reference_digest(&params, &data);
        for count in counts {
            let label = format!("{}, {len} bytes, {count} parts, {kernel:?}", params.label());
            let mut set = Vec::new();
            for index in 0..count {
                let out = hasher
                    .hash_part(&params, &path, index, count, &())
                    .unwrap_or_else(|e| panic!("{label}: part {index}: {e}"));
                if on_the_gpu(&params, &out) {
                    assert_eq!(out.backend, BackendUsed::Gpu, "{label}");
                }
                set.push(out.part);
            }
            let joined = join(&set, NameRule::default()).unwrap_or_else(|e| panic!("{label}: {e}"));
            assert_eq!(hex::encode(joined.digest), hex::encode(&want), "{label}");
        }
    }
}

#[test]
fn turboshake_has_no_parts() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "f", b"abc");
    for standard in [Standard::TurboShake128, Standard::TurboShake256] {
        let params = StandardParams::new(standard);
        let e = hasher(8192)
            .hash_part(&params, &path, 0, 1, &())
            .unwrap_err();
        assert!(
            e.to_string()
                .contains(&format!("{standard} is one sponge, with no tree to split")),
            "{e}"
        );
        assert!(Params::from(&params).unsplittable().is_some());
    }
    assert!(
        Params::from(StandardParams::new(Standard::Kt128))
            .unsplittable()
            .is_none()
    );
}

#[test]
fn a_part_needs_a_regular_file_and_an_index_below_the_count() {
    let hasher = hasher(4096);
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "f", b"abc");
    for params in [TreeParams::default().into(), standard(Standard::Kt128)] {
        let e = hasher.hash_part(&params, &path, 3, 3, &()).unwrap_err();
        assert!(e.to_string().contains("below the count"), "{e}");
        for special in [
            dir.path(),
            Path::new("/proc/self/status"),
            Path::new("/dev/null"),
        ] {
            let e = hasher.hash_part(&params, special, 0, 2, &()).unwrap_err();
            let text = e.to_string();
            assert!(
                text.contains("regular file") || text.contains("directory"),
                "{}: {text}",
                special.display()
            );
        }
        assert!(
            hasher
                .hash_part(&params, &dir.path().join("none"), 0, 1, &())
                .is_err()
        );
    }
}

// ------------------------------------------------------------------ the format

#[test]
fn li_parts_read_back_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let params: Params =
        TreeParams::with_options(Algorithm::Shake256, 3, 3, Some(64), vec![1, 2, 3], Some(77))
            .unwrap()
            .into();
    let path = write(dir.path(), "f", &common::spec_input(20_000));
    for bytes in parts(&hasher(4096), &params, &path, 5) {
        let part = Part::from_bytes(&bytes).unwrap();
        assert_eq!(part.to_bytes(), bytes);
        assert_eq!(part.params().output_len(), 77);
        assert!(part.keyed());
        assert!(part.prefix_matches(&[1, 2, 3]));
        assert!(!part.prefix_matches(&[1, 2, 4]));
        assert_eq!(part.file_len(), 20_000);
        assert_eq!(part.name(), path.as_os_str().as_encoded_bytes());
        assert_eq!(part.leaves(), part_leaves(27, 5, part.index()));
        // The prefix itself is nowhere in the part.
        assert!(!bytes.windows(3).any(|w| w == [1, 2, 3]));
    }
}

/// Every level of the tree of `data` under `params`, leaves first (level
/// H), the root last (level 0): the spec's steps 1 to 6, kept.
fn reference_levels(params: &TreeParams, data: &[u8]) -> Vec<Vec<Vec<u8>>> {
    let a = params.algorithm();
    let m: Vec<u8> = params.prefix().iter().chain(data).copied().collect();
    let leaf_count = params.leaf_count() as usize;
    if params.height() == 0 {
        return vec![vec![treehash_reference::node_function(
            reference_node(a),
            &m,
            params.output_len(),
        )]];
    }
    let mut leaves = vec![Vec::new(); leaf_count];
    for (i, block) in m.chunks(params.block_size()).enumerate() {
        leaves[i % leaf_count].extend_from_slice(block);
    }
    let c = a.chaining_len();
    let mut levels = vec![
        leaves
            .iter()
            .map(|leaf| treehash_reference::node_function(reference_node(a), leaf, c))
            .collect::<Vec<_>>(),
    ];
    for h in (0..params.height()).rev() {
        let len = if h == 0 { params.output_len() } else { c };
        let below = levels.last().unwrap();
        let level = below
            .chunks(params.degree() as usize)
            .map(|children| {
                treehash_reference::node_function(reference_node(a), &children.concat(), len)
            })
            .collect();
        levels.push(level);
    }
    levels
}

/// Each field of an LI part at the offset docs/SPEC.md gives, decoded here
/// and compared with what the spec says it holds: the parameters, the key
/// check, the file's size, time and name, the range, W, and the values of
/// the whole subtrees that tile the range (from the spec's tree, kept level
/// by level), then the check value. (A standard part's fields are others:
/// the next test.)
#[test]
fn an_li_part_is_laid_out_as_the_spec_states() {
    let dir = tempfile::tempdir().unwrap();
    let hasher = hasher(4096);
    let prefix = b"seven!!".to_vec();
    let cases = [
        (
            Algorithm::Sha3_256,
            3,
            3,
            Some(16),
            prefix.clone(),
            None,
            700,
            4,
        ),
        (
            Algorithm::Shake128,
            3,
            3,
            Some(16),
            Vec::new(),
            Some(20),
            100,
            5,
        ),
        (
            Algorithm::Sha3_512,
            2,
            4,
            None,
            prefix.clone(),
            None,
            3000,
            1,
        ),
        (Algorithm::Sha3_224, 0, 2, None, Vec::new(), None, 50, 2),
    ];
    for (algorithm, height, degree, block, prefix, n, len, count) in cases {
        let params =
            TreeParams::with_options(algorithm, height, degree, block, prefix.clone(), n).unwrap();
        let data = common::spec_input(len);
        let path = write(dir.path(), "spec", &data);
        let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
        let levels = reference_levels(&params, &data);
        let l = params.leaf_count();
        let b = params.block_size() as u64;
        let holding = (prefix.len() as u64 + len as u64).div_ceil(b).min(l);
        let set = parts(&hasher, &params.clone().into(), &path, count);
        for (index, bytes) in set.iter().enumerate() {
            let u8_at = |at: usize| bytes[at];
            let u16_at = |at: usize| u16::from_le_bytes(bytes[at..at + 2].try_into().unwrap());
            let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
            let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
            assert_eq!(&bytes[..8], b"\x89THPART\n");
            assert_eq!((u8_at(8), u8_at(9)), (2, 1));
            let code = Algorithm::ALL.iter().position(|&a| a == algorithm).unwrap() as u8 + 1;
            assert_eq!(u8_at(10), code);
            let keyed = !prefix.is_empty();
            assert_eq!(u8_at(11), u8::from(keyed) | 2 | 4);
            assert_eq!(u32_at(12), height);
            assert_eq!(u64_at(16), degree);
            assert_eq!(u32_at(24) as u64, b);
            assert_eq!(u32_at(28) as usize, params.output_len());
            let key_check = if keyed {
                sha3::Sha3_256::new()
                    .chain_update(b"treehash part key check v1\0")
                    .chain_update(&prefix)
                    .finalize()[..16]
                    .to_vec()
            } else {
                vec![0; 16]
            };
            assert_eq!(&bytes[32..48], &key_check[..]);
            assert_eq!(u64_at(48), len as u64);
            let ns = modified
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64;
            assert_eq!(u64_at(56), ns);
            assert_eq!((u64_at(64), u64_at(72)), (count, index as u64));
            assert_eq!(&bytes[80..88], &common::parts::host_tag());
            let meta = std::fs::metadata(&path).unwrap();
            assert_eq!(u64_at(88), meta.ino());
            assert_eq!(u64_at(96), common::parts::change_time_ns(&meta));
            let (a, e) = (index as u64 * l / count, (index as u64 + 1) * l / count);
            assert_eq!((u64_at(104), u64_at(112)), (a, e));
            assert_eq!(u64_at(120), holding);
            let name_len = u16_at(136) as usize;
            assert_eq!(
                &bytes[138..138 + name_len],
                path.as_os_str().as_encoded_bytes()
            );
            // The tiling, greedily: the largest aligned subtree that fits.
            let mut want = Vec::new();
            let mut at = a;
            while at < e {
                let mut k = 0;
                while k < height && at % degree.pow(k + 1) == 0 && at + degree.pow(k + 1) <= e {
                    k += 1;
                }
                let size = degree.pow(k);
                let node = at / size;
                let level = height - k;
                if level == 0 || node < holding.div_ceil(size) {
                    want.push(levels[k as usize][node as usize].clone());
                }
                at += size;
            }
            assert_eq!(u64_at(128), want.len() as u64);
            let values = &bytes[138 + name_len..bytes.len() - 16];
            assert_eq!(
                hex::encode(values),
                hex::encode(want.concat()),
                "part {index}"
            );
            let (body, check) = bytes.split_at(bytes.len() - 16);
            assert_eq!(check, &sha3::Sha3_256::digest(body)[..16]);
        }
    }
}

/// Each field of a standard part at the offset docs/SPEC.md gives, decoded
/// here and compared with what the spec says it holds, the chaining values
/// computed here from RFC 9861's and SP 800-185's definitions: KT's
/// CV_i = TurboSHAKE(S_i, 0B, c), ParallelHash's the SHAKE of each block.
#[test]
fn a_standard_part_is_laid_out_as_the_spec_states() {
    let dir = tempfile::tempdir().unwrap();
    let hasher = hasher(1 << 16);
    let cases = [
        (StandardParams::new(Standard::Kt128), 50_000, 4),
        (
            StandardParams::new(Standard::Kt256)
                .with_customization(vec![9; 9000])
                .unwrap(),
            100,
            3,
        ),
        (
            StandardParams::new(Standard::ParallelHash256)
                .with_block_size(1000)
                .unwrap()
                .with_customization(b"S!".to_vec())
                .unwrap()
                .with_output_len(40)
                .unwrap(),
            9_999,
            3,
        ),
        (StandardParams::new(Standard::ParallelHash128), 0, 2),
    ];
    for (params, len, count) in cases {
        let data = common::spec_input(len);
        let path = write(dir.path(), "spec", &data);
        let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
        let ns = modified
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64;
        let standard = params.standard();
        let kt = standard.family() == Family::Kangaroo;
        let c = params.customization();
        // S: KT's M ‖ C ‖ length_encode(|C|); ParallelHash's X.
        let mut s = data.clone();
        if kt {
            s.extend_from_slice(c);
            s.extend(kangaroo::length_encode(c.len() as u64));
        }
        let b = params.block_size();
        let n = s.len().div_ceil(b) as u64;
        let cv = |chunk: &[u8]| match standard {
            Standard::Kt128 => turboshake::turboshake128(chunk, 0x0b, 32),
            Standard::Kt256 => turboshake::turboshake256(chunk, 0x0b, 64),
            Standard::ParallelHash128 => node_function(Node::Shake128, chunk, 32),
            _ => node_function(Node::Shake256, chunk, 64),
        };
        let set = parts(&hasher, &params.clone().into(), &path, count);
        for (index, bytes) in set.iter().enumerate() {
            let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
            let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
            assert_eq!(&bytes[..8], b"\x89THPART\n");
            assert_eq!(bytes[8], 2, "version");
            assert_eq!(bytes[9], if kt { 2 } else { 3 }, "mode");
            let code = match standard {
                Standard::Kt128 | Standard::ParallelHash128 => 1,
                _ => 2,
            };
            assert_eq!(bytes[10], code);
            assert_eq!(
                bytes[11],
                2 | 4,
                "flags: the time and the identity are known"
            );
            assert_eq!(u32_at(12) as usize, b);
            assert_eq!(u32_at(16) as usize, params.output_len());
            assert_eq!(u32_at(20) as usize, c.len());
            assert_eq!(u64_at(24), len as u64);
            assert_eq!(u64_at(32), ns);
            assert_eq!((u64_at(40), u64_at(48)), (count, index as u64));
            assert_eq!(&bytes[56..64], &common::parts::host_tag());
            let meta = std::fs::metadata(&path).unwrap();
            assert_eq!(u64_at(64), meta.ino());
            assert_eq!(u64_at(72), common::parts::change_time_ns(&meta));
            let (a, e) = (index as u64 * n / count, (index as u64 + 1) * n / count);
            assert_eq!((u64_at(80), u64_at(88)), (a, e));
            assert_eq!(u64_at(96), n);
            let holds_first = kt && a == 0 && e > a;
            let values = e - a - u64::from(holds_first);
            assert_eq!(u64_at(104), values);
            let first_len = if holds_first { s.len().min(8192) } else { 0 };
            assert_eq!(u32_at(112) as usize, first_len);
            let name_len = u16::from_le_bytes([bytes[116], bytes[117]]) as usize;
            let mut at = 118;
            assert_eq!(
                &bytes[at..at + name_len],
                path.as_os_str().as_encoded_bytes()
            );
            at += name_len;
            assert_eq!(&bytes[at..at + c.len()], c);
            at += c.len();
            assert_eq!(&bytes[at..at + first_len], &s[..first_len]);
            at += first_len;
            let first_value = a + u64::from(holds_first);
            let want: Vec<u8> = (first_value..e)
                .flat_map(|i| {
                    let chunk = &s[i as usize * b..((i as usize + 1) * b).min(s.len())];
                    cv(chunk)
                })
                .collect();
            let end = bytes.len() - 16;
            assert_eq!(
                hex::encode(&bytes[at..end]),
                hex::encode(&want),
                "{}, part {index}",
                params.label()
            );
            assert_eq!(&bytes[end..], &sha3::Sha3_256::digest(&bytes[..end])[..16]);
            let part = Part::from_bytes(bytes).unwrap();
            assert_eq!(&part.to_bytes(), bytes);
            assert_eq!(part.params(), Params::Standard(params.clone()));
            assert_eq!(part.value_count(), values);
            assert!(!part.keyed());
        }
    }
}

// ------------------------------------------------------------- broken sets

/// A set of four parts of each kind (an LI tree, KT128): none, one
/// missing (the first, a middle one, the last), or one given twice is
/// refused, naming the part.
#[test]
fn a_missing_or_duplicate_part_is_refused() {
    assert_eq!(refused(&[]), JoinError::NoParts);
    for (params, len) in [
        (tree(Algorithm::Sha3_256, 3, 4), 50_000),
        (standard(Standard::Kt128), 100_000),
    ] {
        let what = params.label();
        let (_dir, set) = split(&params, len, 4);
        let missing = [set[0].clone(), set[1].clone(), set[3].clone()];
        assert_eq!(
            refused(&missing),
            JoinError::Missing { index: 2, count: 4 },
            "{what}"
        );
        assert_eq!(
            refused(&set[..3]),
            JoinError::Missing { index: 3, count: 4 },
            "{what}"
        );
        assert_eq!(
            refused(&set[1..]),
            JoinError::Missing { index: 0, count: 4 },
            "{what}"
        );
        for twice in [1, 3] {
            let set = [&set[..], &set[twice..twice + 1]].concat();
            let e = refused(&set);
            let want = JoinError::Duplicate {
                at: 4,
                other: twice,
                index: twice as u64,
                count: 4,
            };
            assert_eq!(e, want, "{what}");
            assert_eq!(e.part(), Some(4));
            assert_eq!(
                e.to_string(),
                format!(
                    "part #5: part {twice} of 4 is given twice (also as part #{})",
                    twice + 1
                )
            );
        }
    }
}

/// Parts of another function, other parameters, another prefix or
/// customization string, another file or another split, mixed into a
/// whole set of each kind: refused, naming what differs. And an LI part
/// among standard ones, and the other way round.
#[test]
fn parts_of_another_file_function_or_parameters_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let data = common::spec_input(70_000);
    let path = write(dir.path(), "f", &data);
    let hasher = hasher(1 << 16);
    let li = |alg, h, d, b, prefix: &[u8], n| -> Params {
        TreeParams::with_options(alg, h, d, b, prefix.to_vec(), n)
            .unwrap()
            .into()
    };
    let cases = [
        (
            li(Algorithm::Shake128, 3, 4, None, b"key-1", Some(40)),
            vec![
                (
                    "parameters",
                    li(Algorithm::Shake256, 3, 4, None, b"key-1", Some(40)),
                ),
                (
                    "parameters",
                    li(Algorithm::Shake128, 3, 4, Some(8), b"key-1", Some(40)),
                ),
                (
                    "parameters",
                    li(Algorithm::Shake128, 3, 4, None, b"key-1", Some(41)),
                ),
                // D = 2 at H = 4 has 16 leaves too, but other parameters.
                (
                    "parameters",
                    li(Algorithm::Shake128, 4, 2, None, b"key-1", Some(40)),
                ),
                (
                    "prefix",
                    li(Algorithm::Shake128, 3, 4, None, b"key-2", Some(40)),
                ),
                ("prefix", li(Algorithm::Shake128, 3, 4, None, b"", Some(40))),
            ],
        ),
        (
            ph(Standard::ParallelHash128, 1000, b"S", 32),
            vec![
                ("function", standard(Standard::ParallelHash256)),
                ("function", standard(Standard::Kt128)),
                ("parameters", ph(Standard::ParallelHash128, 1001, b"S", 32)),
                ("parameters", ph(Standard::ParallelHash128, 1000, b"S", 33)),
                (
                    "customization string",
                    ph(Standard::ParallelHash128, 1000, b"T", 32),
                ),
                (
                    "customization string",
                    ph(Standard::ParallelHash128, 1000, b"", 32),
                ),
            ],
        ),
    ];
    let part_of = |params: &Params, file: &Path, count: u64, index: usize| {
        parts(&hasher, params, file, count).swap_remove(index)
    };
    // Another file of another size; the same size, another time; the same
    // file under another name (a link: made before any part, since it
    // changes the file's change time).
    let other_files = other_files(dir.path(), &path, &data);
    let mut sets = Vec::new();
    for (base, others) in cases {
        let label = base.label();
        let set = parts(&hasher, &base, &path, 4);
        for (what, other) in others {
            let got = differs(&set, 2, part_of(&other, &path, 4, 2));
            assert_eq!(got, what, "{label} and {}", other.label());
        }
        // Another split of the same file.
        let got = differs(&set, 3, part_of(&base, &path, 5, 3));
        assert_eq!(got, "part count", "{label}");
        for (file, what) in &other_files {
            // The first part is the one the others are compared with.
            assert_eq!(
                differs(&set, 0, part_of(&base, file, 4, 0)),
                *what,
                "{label}"
            );
        }
        sets.push(set);
    }
    // An LI part among standard ones, and the other way round.
    let li = li(Algorithm::Shake128, 2, 4, None, b"", None);
    let li = parts(&hasher, &li, &path, 4);
    let ph = &sets[1];
    assert_eq!(differs(ph, 1, li[1].clone()), "function");
    assert_eq!(differs(&li, 2, ph[2].clone()), "function");
    let e = refused(&[li[0].clone(), ph[1].clone()]);
    assert!(
        e.to_string()
            .contains("its function (parallelhash128) differs from part #1's (shake128)"),
        "{e}"
    );
}

/// The first byte of every field of an LI part (docs/SPEC.md), up to the name.
const LI_FIELDS: [(usize, &str); 22] = [
    (0, "signature"),
    (8, "version"),
    (9, "mode"),
    (10, "function"),
    (11, "flags"),
    (12, "height"),
    (16, "degree"),
    (24, "block size"),
    (28, "output length"),
    (32, "key check"),
    (48, "file size"),
    (56, "modification time"),
    (64, "part count"),
    (72, "part index"),
    (80, "host"),
    (88, "inode"),
    (96, "change time"),
    (104, "first leaf"),
    (112, "end leaf"),
    (120, "leaves holding a block"),
    (128, "value count"),
    (136, "name length"),
];

/// The first byte of every field of a standard part (docs/SPEC.md), up to
/// the name.
const STANDARD_FIELDS: [(usize, &str); 22] = [
    (0, "signature"),
    (8, "version"),
    (9, "mode"),
    (10, "function"),
    (11, "flags"),
    (12, "chunk length"),
    (16, "output length"),
    (20, "customization length"),
    (24, "file size"),
    (32, "modification time"),
    (40, "part count"),
    (48, "part index"),
    (56, "host"),
    (64, "inode"),
    (72, "change time"),
    (80, "first chunk"),
    (88, "end chunk"),
    (96, "chunk count"),
    (104, "value count"),
    (112, "first chunk length"),
    (116, "name length"),
    (118, "name"),
];

/// One part of each kind with a byte of every field flipped (bits 0, 4 and
/// 7), of the name, the values and the check value (and a standard part's
/// customization string and KT's first chunk), cut short by 1 to all but
/// its header's bytes, or one byte longer: refused as unreadable, naming
/// the part.
#[test]
fn a_flipped_byte_anywhere_or_a_cut_is_refused() {
    let keyed = TreeParams::with_options(Algorithm::Sha3_224, 2, 4, None, vec![9; 5], None);
    let kt256 = kt(Standard::Kt256, b"abc", 64);
    // Part 0 of KT holds the first chunk whole.
    for (params, index, fields, header) in [
        (keyed.unwrap().into(), 1, &LI_FIELDS, 138),
        (kt256, 0, &STANDARD_FIELDS, 118),
    ] {
        let (_dir, set) = split(&params, 40_000, 3);
        let what = params.label();
        let part = &set[index];
        let name_len = u16::from_le_bytes([part[header - 2], part[header - 1]]) as usize;
        let mut places: Vec<(usize, &str)> = fields.to_vec();
        places.extend([
            (header, "name"),
            (part.len() - 20, "values"),
            (part.len() - 1, "check value"),
        ]);
        if let Params::Standard(p) = &params {
            let c = p.customization().len();
            places.extend([
                (header + name_len, "customization"),
                (header + name_len + c, "first chunk"),
            ]);
        }
        for (at, field) in places {
            for bit in [0, 4, 7] {
                let mut broken = set.clone();
                broken[index][at] ^= 1 << bit;
                let want = if at < 8 {
                    PartError::NotAPart
                } else {
                    PartError::Corrupt
                };
                assert_eq!(
                    refused(&broken),
                    JoinError::Unreadable {
                        at: index,
                        error: want
                    },
                    "{what}: {field}, byte {at}, bit {bit}"
                );
            }
        }
        for cut in [
            1,
            16,
            17,
            part.len() - header,
            part.len() - 11,
            part.len() - 1,
        ] {
            let mut broken = set.clone();
            broken[index].truncate(part.len() - cut);
            let e = refused(&broken);
            assert_eq!(
                e,
                JoinError::Unreadable {
                    at: index,
                    error: PartError::Corrupt
                },
                "{what}: cut {cut}: {e}"
            );
        }
        let mut longer = set.clone();
        longer[index].push(0);
        assert!(matches!(
            refused(&longer),
            JoinError::Unreadable { at, .. } if at == index
        ));
    }
    assert_eq!(Part::from_bytes(b"hello"), Err(PartError::NotAPart));
}

/// Parts that a later or faulty writer could make: an unknown version or
/// mode, and fields that contradict each other under a valid check value,
/// of each kind; one byte or one value more. And what only a standard
/// part has: KT's first chunk stored by a part that does not own chunk 0,
/// a ParallelHash part (mode 3) read as KT's (mode 2).
#[test]
fn unknown_versions_and_inconsistent_fields_are_refused() {
    let li_fields: &[(&str, usize, u8)] = &[
        ("function", 10, 0),
        ("flags", 11, 0x80),
        ("height", 12, 30),
        ("part index", 72, 1),
        ("first leaf", 104, 1),
        ("leaves holding a block", 120, 2),
        ("value count", 128, 9),
        // A file longer than any (2^63 bytes or more).
        ("file size", 55, 0x80),
    ];
    let standard_fields: &[(&str, usize, u8)] = &[
        ("function", 10, 3),
        ("flags", 11, 0x81),
        ("chunk length", 13, 0x21),
        ("output length", 16, 0),
        ("customization length", 20, 4),
        ("file size", 26, 1),
        ("part index", 48, 3),
        ("first chunk", 80, 0),
        ("end chunk", 88, 9),
        ("chunk count", 96, 9),
        ("value count", 104, 9),
        ("first chunk length", 112, 1),
    ];
    // (parameters, file size, the part to edit, its fields, a value's length)
    let cases = [
        (tree(Algorithm::Sha3_256, 2, 4), 9_000, 2, li_fields, 32),
        (
            kt(Standard::Kt256, b"abc", 64),
            40_000,
            1,
            standard_fields,
            64,
        ),
    ];
    for (params, len, index, fields, value_len) in cases {
        let what = params.label();
        let (_dir, set) = split(&params, len, 3);
        let resealed = |edit: &dyn Fn(&mut Vec<u8>)| common::parts::resealed(&set[index], edit);
        assert_eq!(
            resealed(&|b| b[8] = 1),
            Err(PartError::Version(1)),
            "{what}"
        );
        assert_eq!(
            resealed(&|b| b[8] = 3),
            Err(PartError::Version(3)),
            "{what}"
        );
        assert_eq!(resealed(&|b| b[9] = 4), Err(PartError::Mode(4)), "{what}");
        assert_eq!(resealed(&|b| b[9] = 7), Err(PartError::Mode(7)), "{what}");
        for &(field, at, value) in fields {
            match resealed(&|b| b[at] = value) {
                Err(PartError::Inconsistent(_)) => {}
                other => panic!("{what}: {field}: {other:?}"),
            }
        }
        // A byte more, a value more.
        for more in [1, value_len] {
            assert!(
                matches!(
                    resealed(&|b| b.extend(vec![0; more])),
                    Err(PartError::Inconsistent(_))
                ),
                "{what}: {more} bytes more"
            );
        }
        let unchanged = resealed(&|_| {}).unwrap();
        assert_eq!(unchanged.to_bytes(), set[index], "{what}");
        if matches!(params, Params::Standard(_)) {
            // KT's first chunk stored by a part that does not own chunk 0.
            assert!(matches!(
                common::parts::resealed(&set[0], &|b| b[113] = 0),
                Err(PartError::Inconsistent(_))
            ));
        }
    }
    // A mode 3 part read as mode 2 has KT's chunk length wrong.
    let (_dir, ph_set) = split(&ph(Standard::ParallelHash128, 100, b"", 32), 1000, 2);
    assert!(matches!(
        common::parts::resealed(&ph_set[1], &|b| b[9] = 2),
        Err(PartError::Inconsistent(why)) if why.contains("chunks of 100 bytes")
    ));
}
