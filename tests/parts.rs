//! Parts and joins (docs/SPEC.md, "Parts and joins"): any split of any tree
//! joins to the digest of one process and of the reference, and every
//! broken set is refused with the problem named.

mod common;

use common::parts::{hasher, other_files, refused, write};

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use sha3::Digest;
use treehash::parts::{JoinError, Part, PartError, join, join_bytes, part_leaves};
use treehash::{
    Algorithm, BackendChoice, Hasher, HasherOptions, NoProgress, TreeParams, reference,
};

/// Every part of a split of `count`, as bytes.
fn parts(hasher: &Hasher, params: &TreeParams, path: &Path, count: u64) -> Vec<Vec<u8>> {
    (0..count)
        .map(|index| {
            let out = hasher
                .hash_part(params, path, index, count, &NoProgress)
                .unwrap_or_else(|e| panic!("part {index} of {count}: {e}"));
            assert_eq!(out.part.index(), index);
            out.part.to_bytes()
        })
        .collect()
}

/// A random valid parameter set of `algorithm` with at most `max_leaves` leaves.
fn random_params(rng: &mut StdRng, algorithm: Algorithm, max_leaves: u64) -> TreeParams {
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

/// A part count: one, the leaf count, more than the leaves, one that does
/// not divide them, or any.
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

/// A size near a boundary that matters: empty, tiny, around a block or a
/// stripe, or several stripes.
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

#[test]
fn random_splits_join_to_the_one_process_digest_for_every_function() {
    let mut rng = StdRng::seed_from_u64(25);
    let dir = tempfile::tempdir().unwrap();
    let mut cases = 0;
    for algorithm in Algorithm::ALL {
        for round in 0..25 {
            let params = random_params(&mut rng, algorithm, 512);
            let len = random_size(&mut rng, &params);
            let data: Vec<u8> = (0..len).map(|_| rng.random()).collect();
            let path = write(dir.path(), &format!("{algorithm}-{round}"), &data);
            let count = random_count(&mut rng, params.leaf_count());
            let piece = params.block_size() * rng.random_range(1..=40usize);
            let hasher = hasher(piece);
            let mut set = parts(&hasher, &params, &path, count);
            set.shuffle(&mut rng);
            let label = format!("{}, {len} bytes, {count} parts", params.label());
            let joined = join_bytes(&set).unwrap_or_else(|e| panic!("{label}: {e}"));
            let want = reference::tree_hash(&params, &data);
            assert_eq!(hex::encode(&joined.digest), hex::encode(&want), "{label}");
            let one = hasher.hash_path(&params, &path, &NoProgress).unwrap();
            assert_eq!(joined.digest, one.digest, "{label}");
            assert_eq!(joined.file_len, len as u64);
            assert_eq!(joined.parts, count);
            assert_eq!(joined.keyed, params.has_prefix());
            assert_eq!(joined.label().to_string(), params.label(), "{label}");
            cases += 1;
        }
    }
    assert_eq!(cases, 150);
}

/// The shared vectors (computed by the spec's other implementations), each
/// split several ways, into more parts than leaves too where that is quick.
#[test]
fn split_vectors_join_to_their_digests() {
    let dir = tempfile::tempdir().unwrap();
    let hasher = hasher(1 << 12);
    for (k, vector) in common::vectors().iter().enumerate() {
        let params = vector.params();
        let path = write(dir.path(), &format!("v{k}"), &vector.input());
        let mut counts = vec![2, 3, 7];
        if params.leaf_count() <= 256 {
            counts.push(params.leaf_count() + 1);
        }
        for count in counts {
            let joined = join_bytes(&parts(&hasher, &params, &path, count)).unwrap();
            assert_eq!(
                hex::encode(joined.digest),
                vector.digest,
                "vector {k}, {} parts",
                count
            );
        }
    }
}

/// Trees of 2^12 to 2^16 leaves split at and off subtree boundaries; with
/// files that fill every leaf, half of them, or a few.
#[test]
fn larger_trees_split_many_ways() {
    let dir = tempfile::tempdir().unwrap();
    let hasher = hasher(1 << 16);
    let cases = [
        (Algorithm::Sha3_256, 8, 4, 2 * 65536 * 136 + 99),
        (Algorithm::Shake128, 12, 2, 4096 * 168 / 2 + 5),
        (Algorithm::Sha3_512, 6, 4, 3000),
    ];
    for (algorithm, height, degree, len) in cases {
        let params = TreeParams::new(algorithm, height, degree).unwrap();
        let data = common::spec_input(len);
        let path = write(dir.path(), "big", &data);
        let want = reference::tree_hash(&params, &data);
        let more_than_leaves = params.leaf_count() + 1;
        let counts = if len < 10_000 {
            vec![1, 2, 3, 16, 100, more_than_leaves]
        } else {
            vec![1, 2, 3, 16, 100]
        };
        for count in counts {
            let joined = join_bytes(&parts(&hasher, &params, &path, count)).unwrap();
            assert_eq!(joined.digest, want, "{}, {count} parts", params.label());
        }
    }
}

#[test]
fn parts_read_back_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let params =
        TreeParams::with_options(Algorithm::Shake256, 3, 3, Some(64), vec![1, 2, 3], Some(77))
            .unwrap();
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

/// The split of a file of `len` bytes under `params` into `count` parts.
fn split(params: &TreeParams, len: usize, count: u64) -> (tempfile::TempDir, Vec<Vec<u8>>) {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "file", &common::spec_input(len));
    let set = parts(&hasher(8192), params, &path, count);
    (dir, set)
}

#[test]
fn a_missing_or_duplicate_part_is_refused() {
    let params = TreeParams::new(Algorithm::Sha3_256, 3, 4).unwrap();
    let (_dir, set) = split(&params, 50_000, 4);
    assert_eq!(refused(&[]), JoinError::NoParts);
    let missing = [set[0].clone(), set[1].clone(), set[3].clone()];
    assert_eq!(refused(&missing), JoinError::Missing { index: 2, count: 4 });
    assert_eq!(
        refused(&set[..3]),
        JoinError::Missing { index: 3, count: 4 }
    );
    let twice = [&set[..], &set[1..2]].concat();
    let e = refused(&twice);
    assert_eq!(
        e,
        JoinError::Duplicate {
            at: 4,
            other: 1,
            index: 1,
            count: 4
        }
    );
    assert_eq!(e.part(), Some(4));
    assert_eq!(
        e.to_string(),
        "part #5: part 1 of 4 is given twice (also as part #2)"
    );
}

/// Parts of other parameters, another prefix, another file, or another
/// split, mixed into a whole set: refused, naming what differs.
#[test]
fn parts_of_another_file_or_other_parameters_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let data = common::spec_input(70_000);
    let path = write(dir.path(), "f", &data);
    let hasher = hasher(8192);
    let p = |alg, h, d, b, prefix: &[u8], n| {
        TreeParams::with_options(alg, h, d, b, prefix.to_vec(), n).unwrap()
    };
    let base = p(Algorithm::Shake128, 3, 4, None, b"key-1", Some(40));
    let set = parts(&hasher, &base, &path, 4);
    let others = [
        (
            "parameters",
            p(Algorithm::Shake256, 3, 4, None, b"key-1", Some(40)),
        ),
        (
            "parameters",
            p(Algorithm::Shake128, 3, 4, Some(8), b"key-1", Some(40)),
        ),
        (
            "parameters",
            p(Algorithm::Shake128, 3, 4, None, b"key-1", Some(41)),
        ),
        (
            "prefix",
            p(Algorithm::Shake128, 3, 4, None, b"key-2", Some(40)),
        ),
        ("prefix", p(Algorithm::Shake128, 3, 4, None, b"", Some(40))),
    ];
    for (what, other) in others {
        let mut mixed = set.clone();
        mixed[2] = parts(&hasher, &other, &path, 4).swap_remove(2);
        match refused(&mixed) {
            JoinError::Differs { at: 2, what: w, .. } => assert_eq!(w, what),
            e => panic!("{what}: {e}"),
        }
    }
    // D = 2 at H = 4 has 16 leaves too, but other parameters.
    let mut mixed = set.clone();
    mixed[1] = parts(
        &hasher,
        &p(Algorithm::Shake128, 4, 2, None, b"key-1", Some(40)),
        &path,
        4,
    )
    .swap_remove(1);
    assert!(matches!(
        refused(&mixed),
        JoinError::Differs {
            what: "parameters",
            ..
        }
    ));
    // Another split of the same file.
    let mut mixed = set.clone();
    mixed[3] = parts(&hasher, &base, &path, 5).swap_remove(3);
    assert!(matches!(
        refused(&mixed),
        JoinError::Differs {
            what: "part count",
            ..
        }
    ));
    // Another file of another size; of the same size with another time;
    // the same file under another name.
    for (file, what) in other_files(dir.path(), &path, &data) {
        let mut mixed = set.clone();
        mixed[0] = parts(&hasher, &base, &file, 4).swap_remove(0);
        // The first part is the one the others are compared with.
        match refused(&mixed) {
            JoinError::Differs { at: 1, what: w, .. } => assert_eq!(w, what),
            e => panic!("{what}: {e}"),
        }
    }
}

/// The first byte of every field of a part (docs/SPEC.md), up to the name.
const FIELDS: [(usize, &str); 22] = [
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

#[test]
fn a_flipped_byte_anywhere_or_a_cut_is_refused() {
    let params =
        TreeParams::with_options(Algorithm::Sha3_224, 2, 4, None, vec![9; 5], None).unwrap();
    let (_dir, set) = split(&params, 40_000, 3);
    let part = &set[1];
    // A byte in every field, the name, the values and the check value.
    let mut places: Vec<(usize, &str)> = FIELDS.to_vec();
    let header = FIELDS.last().unwrap().0 + 2;
    places.extend([
        (header, "name"),
        (part.len() - 20, "values"),
        (part.len() - 1, "check value"),
    ]);
    for (at, field) in places {
        for bit in [0, 7] {
            let mut broken = set.clone();
            broken[1][at] ^= 1 << bit;
            let e = refused(&broken);
            let want = if at < 8 {
                PartError::NotAPart
            } else {
                PartError::Corrupt
            };
            assert_eq!(
                e,
                JoinError::Unreadable { at: 1, error: want },
                "{field}, byte {at}"
            );
        }
    }
    for cut in [1, 16, 17, part.len() - 138, part.len() - 1] {
        let mut broken = set.clone();
        broken[1].truncate(part.len() - cut);
        let e = refused(&broken);
        assert!(
            matches!(
                e,
                JoinError::Unreadable {
                    at: 1,
                    error: PartError::Corrupt
                }
            ),
            "cut {cut}: {e}"
        );
    }
    let mut longer = set.clone();
    longer[1].push(0);
    assert!(matches!(
        refused(&longer),
        JoinError::Unreadable { at: 1, .. }
    ));
    assert_eq!(Part::from_bytes(b"hello"), Err(PartError::NotAPart));
}

/// Parts that a later or faulty writer could make: an unknown version or
/// mode, and fields that contradict each other under a valid check value.
#[test]
fn unknown_versions_and_inconsistent_fields_are_refused() {
    let params = TreeParams::new(Algorithm::Sha3_256, 2, 4).unwrap();
    let (_dir, set) = split(&params, 9_000, 3);
    let resealed = |edit: &dyn Fn(&mut Vec<u8>)| common::parts::resealed(&set[2], edit);
    assert_eq!(resealed(&|b| b[8] = 1), Err(PartError::Version(1)));
    assert_eq!(resealed(&|b| b[8] = 3), Err(PartError::Version(3)));
    assert_eq!(resealed(&|b| b[9] = 7), Err(PartError::Mode(7)));
    let inconsistent = [
        ("function", 10, 0u8),
        ("flags", 11, 0x80),
        ("height", 12, 30),
        ("part index", 72, 1),
        ("first leaf", 104, 1),
        ("leaves holding a block", 120, 2),
        ("value count", 128, 9),
        // A file longer than any (2^63 bytes or more).
        ("file size", 55, 0x80),
    ];
    for (field, at, value) in inconsistent {
        match resealed(&|b| b[at] = value) {
            Err(PartError::Inconsistent(_)) => {}
            other => panic!("{field}: {other:?}"),
        }
    }
    // A value more or less.
    assert!(matches!(
        resealed(&|b| b.push(0)),
        Err(PartError::Inconsistent(_))
    ));
    let unchanged = resealed(&|_| {}).unwrap();
    assert_eq!(unchanged.to_bytes(), set[2]);
}

/// With more parts than leaves, the parts past the leaves own none and read
/// nothing; a file shorter than a stripe leaves the last parts' leaves
/// empty. Height 0 is a tree of one leaf: one part owns it.
#[test]
fn more_parts_than_leaves_and_short_files() {
    let dir = tempfile::tempdir().unwrap();
    let hasher = hasher(4096);
    for (params, len, count) in [
        (TreeParams::new(Algorithm::Sha3_384, 0, 4).unwrap(), 1000, 3),
        (TreeParams::new(Algorithm::Sha3_384, 0, 4).unwrap(), 0, 2),
        (TreeParams::new(Algorithm::Sha3_256, 2, 4).unwrap(), 200, 40),
        (TreeParams::new(Algorithm::Sha3_256, 2, 4).unwrap(), 0, 1),
        (TreeParams::new(Algorithm::Sha3_256, 2, 4).unwrap(), 0, 7),
        (
            TreeParams::with_options(Algorithm::Sha3_256, 2, 4, None, vec![5; 200], None).unwrap(),
            0,
            7,
        ),
    ] {
        let data = common::spec_input(len);
        let path = write(dir.path(), "f", &data);
        let outs: Vec<_> = (0..count)
            .map(|i| {
                hasher
                    .hash_part(&params, &path, i, count, &NoProgress)
                    .unwrap()
            })
            .collect();
        for out in &outs {
            let leaves = out.part.leaves();
            if leaves.is_empty() {
                assert_eq!(out.bytes_read, 0);
                assert_eq!(out.part.value_count(), 0);
            }
        }
        let read: u64 = outs.iter().map(|o| o.bytes_read).sum();
        assert_eq!(read, len as u64, "{} {len} {count}", params.label());
        let set: Vec<Part> = outs.into_iter().map(|o| o.part).collect();
        let joined = join(&set).unwrap();
        assert_eq!(joined.digest, reference::tree_hash(&params, &data));
    }
}

#[test]
fn a_part_needs_a_regular_file_and_an_index_below_the_count() {
    let hasher = hasher(4096);
    let params = TreeParams::default();
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "f", b"abc");
    let e = hasher
        .hash_part(&params, &path, 3, 3, &NoProgress)
        .unwrap_err();
    assert!(e.to_string().contains("below the count"), "{e}");
    for special in [
        dir.path(),
        Path::new("/proc/self/status"),
        Path::new("/dev/null"),
    ] {
        let e = hasher
            .hash_part(&params, special, 0, 2, &NoProgress)
            .unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("regular file") || text.contains("directory"),
            "{}: {text}",
            special.display()
        );
    }
    assert!(
        hasher
            .hash_part(&params, &dir.path().join("none"), 0, 1, &NoProgress)
            .is_err()
    );
}

/// Every level of the tree of `data` under `params`, leaves first (level
/// H), the root last (level 0): the spec's steps 1 to 6, kept.
fn reference_levels(params: &TreeParams, data: &[u8]) -> Vec<Vec<Vec<u8>>> {
    let a = params.algorithm();
    let m: Vec<u8> = params.prefix().iter().chain(data).copied().collect();
    let leaf_count = params.leaf_count() as usize;
    if params.height() == 0 {
        return vec![vec![reference::node_function(a, &m, params.output_len())]];
    }
    let mut leaves = vec![Vec::new(); leaf_count];
    for (i, block) in m.chunks(params.block_size()).enumerate() {
        leaves[i % leaf_count].extend_from_slice(block);
    }
    let c = a.chaining_len();
    let mut levels = vec![
        leaves
            .iter()
            .map(|leaf| reference::node_function(a, leaf, c))
            .collect::<Vec<_>>(),
    ];
    for h in (0..params.height()).rev() {
        let len = if h == 0 { params.output_len() } else { c };
        let below = levels.last().unwrap();
        let level = below
            .chunks(params.degree() as usize)
            .map(|children| reference::node_function(a, &children.concat(), len))
            .collect();
        levels.push(level);
    }
    levels
}

/// Each field of a part at the offset docs/SPEC.md gives, decoded here and
/// compared with what the spec says it holds: the parameters, the key
/// check, the file's size, time and name, the range, W, and the values of
/// the whole subtrees that tile the range (from the spec's tree, kept level
/// by level), then the check value.
#[test]
fn the_format_is_the_one_the_spec_states() {
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
        for (index, bytes) in parts(&hasher, &params, &path, count).iter().enumerate() {
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

/// Parts hashed on the GPU (`--backend gpu`): the engine owns the part's
/// leaves and reads only their runs, with either leaf kernel; the set joins
/// to the reference. Needs a CUDA GPU: `cargo test --release --test parts
/// -- --ignored` on the GPU machine.
#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_parts_join_to_the_reference() {
    use treehash::gpu::LeafKernel;
    let mut rng = StdRng::seed_from_u64(2525);
    let dir = tempfile::tempdir().unwrap();
    for kernel in [
        None,
        Some(LeafKernel::ThreadPerLeaf),
        Some(LeafKernel::WarpPerLeaf),
    ] {
        let hasher = Hasher::new(
            HasherOptions::default()
                .with_backend(BackendChoice::Gpu)
                .with_piece_bytes(Some(1 << 16))
                .with_gpu_leaf_kernel(kernel),
        )
        .unwrap();
        hasher.gpu().expect("a usable CUDA GPU");
        for algorithm in Algorithm::ALL {
            for round in 0..6 {
                let params = random_params(&mut rng, algorithm, 4096);
                let len = random_size(&mut rng, &params);
                let data: Vec<u8> = (0..len).map(|_| rng.random()).collect();
                let path = write(dir.path(), &format!("g{round}"), &data);
                let count = random_count(&mut rng, params.leaf_count());
                let label = format!("{}, {len} bytes, {count} parts, {kernel:?}", params.label());
                let mut set = Vec::new();
                for index in 0..count {
                    let out = hasher
                        .hash_part(&params, &path, index, count, &NoProgress)
                        .unwrap_or_else(|e| panic!("{label}: part {index}: {e}"));
                    if out.bytes_read > 0 {
                        assert_eq!(out.backend, treehash::BackendUsed::Gpu, "{label}");
                    }
                    set.push(out.part);
                }
                let joined = join(&set).unwrap_or_else(|e| panic!("{label}: {e}"));
                let want = reference::tree_hash(&params, &data);
                assert_eq!(hex::encode(joined.digest), hex::encode(want), "{label}");
            }
        }
    }
}

/// Random splits with the hasher forced onto `path`: its leaf engine and
/// its parent levels' engine (the subtrees of each part) against the
/// reference. A CPU that lacks the path fails the test; the tests of a path
/// this build does not test are ignored instead.
fn parts_on_path(path: treehash::CpuPath, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let dir = tempfile::tempdir().unwrap();
    let hasher = Hasher::new(
        HasherOptions::default()
            .with_backend(BackendChoice::Cpu)
            .with_cpu_path(path)
            .with_threads(Some(2))
            .with_piece_bytes(Some(1 << 14)),
    )
    .unwrap_or_else(|e| panic!("the {path} path: {e}"));
    for algorithm in Algorithm::ALL {
        for round in 0..6 {
            let params = random_params(&mut rng, algorithm, 4096);
            let len = random_size(&mut rng, &params);
            let data: Vec<u8> = (0..len).map(|_| rng.random()).collect();
            let path_name = write(dir.path(), &format!("{algorithm}-{round}"), &data);
            let count = random_count(&mut rng, params.leaf_count()).min(64);
            let set = parts(&hasher, &params, &path_name, count);
            let joined = join_bytes(&set).unwrap();
            let want = reference::tree_hash(&params, &data);
            assert_eq!(
                hex::encode(joined.digest),
                hex::encode(want),
                "{path}: {}, {len} bytes, {count} parts",
                params.label()
            );
        }
    }
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
