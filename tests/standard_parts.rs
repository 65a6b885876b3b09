//! Parts and joins of the standard functions with a tree, KT128, KT256,
//! ParallelHash128 and ParallelHash256 (docs/SPEC.md, "Parts of the
//! standard functions"): any split of any file joins to the digest of one
//! process and of the reference (`treehash::reference`), each part reads
//! only its chunks' bytes, the format is the one the spec states, and every
//! broken set is refused with the problem named.

mod common;

use common::parts::{hasher, other_files, refused, write};

use std::path::Path;

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use sha3::Digest;
use treehash::parts::{JoinError, Part, PartError, join, join_bytes};
use treehash::reference::{kangaroo, node_function, turboshake};
use treehash::standard::{Family, Standard, StandardParams};
use treehash::{Algorithm, BackendChoice, Hasher, HasherOptions, NoProgress, Params, TreeParams};

/// Every part of a split of `count`, as bytes; checks that each reads its
/// chunks' bytes of the file and that together they read it once.
fn parts(hasher: &Hasher, params: &StandardParams, path: &Path, count: u64) -> Vec<Vec<u8>> {
    let file_len = std::fs::metadata(path).unwrap().len();
    let n = chunk_count(params, file_len);
    let chunk = params.block_size() as u64;
    let mut read = 0;
    let set = (0..count)
        .map(|index| {
            let out = hasher
                .hash_part(params, path, index, count, &NoProgress)
                .unwrap_or_else(|e| panic!("{}: part {index} of {count}: {e}", params.label()));
            let part = &out.part;
            assert_eq!(part.index(), index);
            // Chunks [⌊I·n/N⌋, ⌊(I+1)·n/N⌋), their bytes of the file.
            let own = index * n / count..(index + 1) * n / count;
            assert_eq!(part.leaves(), own, "{}", params.label());
            let in_file = |c: u64| (c * chunk).min(file_len);
            assert_eq!(out.bytes_read, in_file(own.end) - in_file(own.start));
            read += out.bytes_read;
            part.to_bytes()
        })
        .collect();
    assert_eq!(read, file_len, "{}: the file read once", params.label());
    set
}

/// n: KT's chunks of S = M ‖ C ‖ length_encode(|C|), ParallelHash's of X.
fn chunk_count(params: &StandardParams, file_len: u64) -> u64 {
    let c = params.customization();
    let s_len = match params.standard().family() {
        Family::Kangaroo => {
            file_len + c.len() as u64 + kangaroo::length_encode(c.len() as u64).len() as u64
        }
        _ => file_len,
    };
    s_len.div_ceil(params.block_size() as u64)
}

fn reference(params: &StandardParams, data: &[u8]) -> Vec<u8> {
    common::reference_digest(&Params::Standard(params.clone()), data)
}

/// Each function with its defaults and with the options it takes: KT with
/// a short C and with one that spills into chunks of its own (9000 bytes),
/// ParallelHash with small blocks (1, 7, 136), its default 8192 and an S.
fn cases() -> Vec<StandardParams> {
    let kt = |s, c: &[u8], n| {
        StandardParams::new(s)
            .with_customization(c.to_vec())
            .unwrap()
            .with_output_len(n)
            .unwrap()
    };
    let ph = |s, b, c: &[u8], n| {
        StandardParams::new(s)
            .with_block_size(b)
            .unwrap()
            .with_customization(c.to_vec())
            .unwrap()
            .with_output_len(n)
            .unwrap()
    };
    vec![
        StandardParams::new(Standard::Kt128),
        kt(Standard::Kt128, b"C", 7),
        kt(Standard::Kt256, &[0x5a; 9000], 64),
        kt(Standard::Kt256, b"", 100),
        ph(Standard::ParallelHash128, 1, b"", 32),
        ph(Standard::ParallelHash128, 7, b"S", 20),
        ph(Standard::ParallelHash256, 136, b"", 64),
        StandardParams::new(Standard::ParallelHash256),
        ph(Standard::ParallelHash128, 8192, &[3; 300], 32),
    ]
}

/// File sizes around the chunks' boundaries: empty, one byte, B ± 1 and
/// a few chunks ± 1 (for KT, 8192 and the sizes where S crosses a chunk
/// boundary), kept under about 60 KB.
fn sizes(params: &StandardParams) -> Vec<usize> {
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

/// Part counts for n chunks: one, n, more than n, one that does not
/// divide n, or any; at most 40 parts.
fn counts(rng: &mut StdRng, n: u64) -> Vec<u64> {
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

#[test]
fn every_split_joins_to_the_one_process_digest_and_the_reference() {
    let mut rng = StdRng::seed_from_u64(2561);
    let dir = tempfile::tempdir().unwrap();
    let mut splits = 0;
    for (case, params) in cases().into_iter().enumerate() {
        for len in sizes(&params) {
            let data: Vec<u8> = (0..len).map(|_| rng.random()).collect();
            let path = write(dir.path(), &format!("f{case}-{len}"), &data);
            let want = reference(&params, &data);
            // Pieces of a few chunks: a part's chunks cross them.
            let hasher = hasher(params.block_size().max(8192) * rng.random_range(1..=4));
            let one = hasher.hash_path(&params, &path, &NoProgress).unwrap();
            assert_eq!(one.digest, want, "{}, {len} bytes", params.label());
            let n = chunk_count(&params, len as u64);
            for count in counts(&mut rng, n) {
                let what = format!("{}, {len} bytes, {count} parts", params.label());
                let mut set = parts(&hasher, &params, &path, count);
                set.shuffle(&mut rng);
                let joined = join_bytes(&set).unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!(hex::encode(&joined.digest), hex::encode(&want), "{what}");
                assert_eq!(joined.params, Params::Standard(params.clone()), "{what}");
                assert_eq!(joined.label().to_string(), params.label(), "{what}");
                assert_eq!((joined.file_len, joined.parts), (len as u64, count));
                assert!(!joined.keyed);
                splits += 1;
            }
        }
    }
    assert!(splits > 300, "{splits} splits");
}

/// Larger files whose parts span many pieces (of 64 KiB) and, for
/// ParallelHash with B = 1, many rounds of chaining values.
#[test]
fn parts_of_many_pieces_join_to_the_reference() {
    let dir = tempfile::tempdir().unwrap();
    let hasher = hasher(64 << 10);
    let b1 = StandardParams::new(Standard::ParallelHash256)
        .with_block_size(1)
        .unwrap();
    let cases = [
        (StandardParams::new(Standard::Kt128), 3_000_017),
        (StandardParams::new(Standard::Kt256), 1_000_000),
        (
            StandardParams::new(Standard::ParallelHash128)
                .with_block_size(136)
                .unwrap(),
            2_000_003,
        ),
        (b1, 300_001),
    ];
    for (params, len) in cases {
        let data = common::spec_input(len);
        let path = write(dir.path(), "big", &data);
        let want = reference(&params, &data);
        for count in [1, 3, 16] {
            let joined = join_bytes(&parts(&hasher, &params, &path, count)).unwrap();
            assert_eq!(joined.digest, want, "{}, {count} parts", params.label());
        }
    }
}

/// The first byte of every field of a standard part (docs/SPEC.md), up to
/// the name.
const FIELDS: [(usize, &str); 22] = [
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

/// Each field of a standard part at the offset docs/SPEC.md gives, decoded
/// here and compared with what the spec says it holds, the chaining values
/// computed here from RFC 9861's and SP 800-185's definitions: KT's
/// CV_i = TurboSHAKE(S_i, 0B, c), ParallelHash's the SHAKE of each block.
#[test]
fn the_format_is_the_one_the_spec_states() {
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
            Standard::ParallelHash128 => node_function(Algorithm::Shake128, chunk, 32),
            _ => node_function(Algorithm::Shake256, chunk, 64),
        };
        for (index, bytes) in parts(&hasher, &params, &path, count).iter().enumerate() {
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
            assert_eq!(u64_at(64), std::os::unix::fs::MetadataExt::ino(&meta));
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

/// The split of a file of `len` bytes under `params` into `count` parts.
fn split(params: &StandardParams, len: usize, count: u64) -> (tempfile::TempDir, Vec<Vec<u8>>) {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "file", &common::spec_input(len));
    let set = parts(&hasher(1 << 16), params, &path, count);
    (dir, set)
}

/// The field that `refused` names for a part of `set` swapped for `other`.
fn differs(set: &[Vec<u8>], at: usize, other: Vec<u8>) -> &'static str {
    let mut mixed = set.to_vec();
    mixed[at] = other;
    match refused(&mixed) {
        JoinError::Differs { what, at: a, .. } if a == at.max(1) => what,
        e => panic!("{e}"),
    }
}

#[test]
fn a_missing_or_duplicate_part_is_refused() {
    let params = StandardParams::new(Standard::Kt128);
    let (_dir, set) = split(&params, 100_000, 4);
    let missing = [set[0].clone(), set[1].clone(), set[3].clone()];
    assert_eq!(refused(&missing), JoinError::Missing { index: 2, count: 4 });
    assert_eq!(
        refused(&set[1..]),
        JoinError::Missing { index: 0, count: 4 }
    );
    let twice = [&set[..], &set[3..]].concat();
    assert_eq!(
        refused(&twice),
        JoinError::Duplicate {
            at: 4,
            other: 3,
            index: 3,
            count: 4
        }
    );
}

/// Parts of another function, other parameters, another customization
/// string, another file or another split, and LI parts, mixed into a whole
/// set: refused, naming what differs.
#[test]
fn parts_of_another_file_function_or_parameters_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let data = common::spec_input(70_000);
    let path = write(dir.path(), "f", &data);
    let hasher = hasher(1 << 16);
    let ph = |b: usize, s: &[u8], n: usize| {
        StandardParams::new(Standard::ParallelHash128)
            .with_block_size(b)
            .unwrap()
            .with_customization(s.to_vec())
            .unwrap()
            .with_output_len(n)
            .unwrap()
    };
    let base = ph(1000, b"S", 32);
    let set = parts(&hasher, &base, &path, 4);
    let part_of = |params: &StandardParams, file: &Path, count: u64, index: usize| {
        parts(&hasher, params, file, count).swap_remove(index)
    };
    let others = [
        ("function", StandardParams::new(Standard::ParallelHash256)),
        ("function", StandardParams::new(Standard::Kt128)),
        ("parameters", ph(1001, b"S", 32)),
        ("parameters", ph(1000, b"S", 33)),
        ("customization string", ph(1000, b"T", 32)),
        ("customization string", ph(1000, b"", 32)),
    ];
    for (what, other) in others {
        assert_eq!(differs(&set, 2, part_of(&other, &path, 4, 2)), what);
    }
    assert_eq!(differs(&set, 3, part_of(&base, &path, 5, 3)), "part count");
    // An LI part among standard ones, and the other way round.
    let tree = TreeParams::new(Algorithm::Shake128, 2, 4).unwrap();
    let li: Vec<Vec<u8>> = (0..4)
        .map(|i| {
            let out = hasher.hash_part(&tree, &path, i, 4, &NoProgress).unwrap();
            out.part.to_bytes()
        })
        .collect();
    assert_eq!(differs(&set, 1, li[1].clone()), "function");
    assert_eq!(differs(&li, 2, set[2].clone()), "function");
    let e = refused(&[li[0].clone(), set[1].clone()]);
    assert!(
        e.to_string()
            .contains("its function (parallelhash128) differs from part #1's (shake128)"),
        "{e}"
    );
    // Another file of another size; the same size, another time; the same
    // file under another name.
    for (file, what) in other_files(dir.path(), &path, &data) {
        // The first part is the one the others are compared with.
        assert_eq!(differs(&set, 0, part_of(&base, &file, 4, 0)), what);
    }
}

#[test]
fn a_flipped_byte_a_cut_or_inconsistent_fields_are_refused() {
    let params = StandardParams::new(Standard::Kt256)
        .with_customization(b"abc".to_vec())
        .unwrap();
    let (_dir, set) = split(&params, 40_000, 3);
    // Part 0 holds the first chunk whole: a byte of every field, of the
    // name, the customization string, S_0, a value and the check value.
    let part = &set[0];
    let name_len = u16::from_le_bytes([part[116], part[117]]) as usize;
    let mut places: Vec<(usize, &str)> = FIELDS.to_vec();
    places.extend([
        (118 + name_len, "customization"),
        (118 + name_len + 3, "first chunk"),
        (part.len() - 20, "values"),
        (part.len() - 1, "check value"),
    ]);
    for (at, field) in places {
        let mut broken = set.clone();
        broken[0][at] ^= 0x10;
        let want = if at < 8 {
            PartError::NotAPart
        } else {
            PartError::Corrupt
        };
        assert_eq!(
            refused(&broken),
            JoinError::Unreadable { at: 0, error: want },
            "{field}, byte {at}"
        );
    }
    for cut in [1, 16, 17, part.len() - 118, part.len() - 11] {
        let mut broken = set.clone();
        broken[0].truncate(part.len() - cut);
        assert!(
            matches!(
                refused(&broken),
                JoinError::Unreadable {
                    error: PartError::Corrupt,
                    ..
                }
            ),
            "cut {cut}"
        );
    }
    // Fields that contradict each other under a valid check value.
    let resealed =
        |index: usize, edit: &dyn Fn(&mut Vec<u8>)| common::parts::resealed(&set[index], edit);
    assert_eq!(resealed(1, &|b| b[9] = 4), Err(PartError::Mode(4)));
    let inconsistent: [(&str, usize, u8); 12] = [
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
    for (field, at, value) in inconsistent {
        match resealed(1, &|b| b[at] = value) {
            Err(PartError::Inconsistent(_)) => {}
            other => panic!("{field}: {other:?}"),
        }
    }
    // KT's first chunk stored by a part that does not own chunk 0, or a
    // value more.
    assert!(matches!(
        resealed(0, &|b| b[113] = 0),
        Err(PartError::Inconsistent(_))
    ));
    assert!(matches!(
        resealed(2, &|b| b.extend([0; 64])),
        Err(PartError::Inconsistent(_))
    ));
    // A mode 3 part read as mode 2 has KT's chunk length wrong.
    let ph = StandardParams::new(Standard::ParallelHash128)
        .with_block_size(100)
        .unwrap();
    let (_dir2, ph_set) = split(&ph, 1000, 2);
    assert!(matches!(
        common::parts::resealed(&ph_set[1], &|b| b[9] = 2),
        Err(PartError::Inconsistent(why)) if why.contains("chunks of 100 bytes")
    ));
    assert_eq!(resealed(1, &|_| {}).unwrap().to_bytes(), set[1]);
}

/// More parts than chunks: the parts past them own none and read nothing;
/// an empty file under KT is one chunk (C ‖ length_encode(|C|)), held
/// whole by the part that owns it; under ParallelHash it has none.
#[test]
fn more_parts_than_chunks_and_empty_files() {
    let dir = tempfile::tempdir().unwrap();
    let hasher = hasher(8192);
    let long_c = StandardParams::new(Standard::Kt128)
        .with_customization(vec![7; 20_000])
        .unwrap();
    for (params, len, count) in [
        (StandardParams::new(Standard::Kt128), 0, 3),
        (StandardParams::new(Standard::Kt256), 100, 2),
        (long_c.clone(), 0, 5),
        (long_c, 10, 2),
        (StandardParams::new(Standard::ParallelHash128), 0, 4),
        (StandardParams::new(Standard::ParallelHash256), 9000, 7),
    ] {
        let data = common::spec_input(len);
        let path = write(dir.path(), "f", &data);
        let set: Vec<Part> = (0..count)
            .map(|i| {
                let out = hasher
                    .hash_part(&params, &path, i, count, &NoProgress)
                    .unwrap();
                if out.part.leaves().is_empty() {
                    assert_eq!((out.bytes_read, out.part.value_count()), (0, 0));
                }
                out.part
            })
            .collect();
        let joined = join(&set).unwrap();
        assert_eq!(
            joined.digest,
            reference(&params, &data),
            "{}",
            params.label()
        );
    }
}

#[test]
fn turboshake_has_no_parts() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "f", b"abc");
    for standard in [Standard::TurboShake128, Standard::TurboShake256] {
        let params = StandardParams::new(standard);
        let e = hasher(8192)
            .hash_part(&params, &path, 0, 1, &NoProgress)
            .unwrap_err();
        assert!(
            e.to_string()
                .contains(&format!("{standard} is one sponge, with no tree to split")),
            "{e}"
        );
        assert!(treehash::parts::unsplittable(&params).is_some());
    }
    assert!(treehash::parts::unsplittable(&StandardParams::new(Standard::Kt128)).is_none());
}

/// Standard parts hashed on the GPU (`--backend gpu`): the GPU reads and
/// hashes each part's chunks; the set joins to the reference. Needs a CUDA
/// GPU: `cargo test --release --test standard_parts -- --ignored` on the
/// GPU machine.
#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_standard_parts_join_to_the_reference() {
    let mut rng = StdRng::seed_from_u64(2562);
    let dir = tempfile::tempdir().unwrap();
    let hasher = Hasher::new(
        HasherOptions::default()
            .with_backend(BackendChoice::Gpu)
            .with_piece_bytes(Some(1 << 16)),
    )
    .unwrap();
    hasher.gpu().expect("a usable CUDA GPU");
    for params in cases() {
        for len in [0, 1, 8193, 200_001, 3_000_000] {
            let data: Vec<u8> = (0..len).map(|_| rng.random()).collect();
            let path = write(dir.path(), "g", &data);
            let n = chunk_count(&params, len as u64);
            for count in counts(&mut rng, n) {
                let what = format!("{}, {len} bytes, {count} parts", params.label());
                let mut set = Vec::new();
                for index in 0..count {
                    let out = hasher
                        .hash_part(&params, &path, index, count, &NoProgress)
                        .unwrap_or_else(|e| panic!("{what}: part {index}: {e}"));
                    let chunks = out.part.leaves();
                    // Whole chunks of the file beyond KT's first go to the GPU.
                    if out.bytes_read >= 4 * params.block_size() as u64
                        && chunks.end - chunks.start > 2
                    {
                        assert_eq!(out.backend, treehash::BackendUsed::Gpu, "{what}");
                    }
                    set.push(out.part);
                }
                let joined = join(&set).unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!(
                    hex::encode(joined.digest),
                    hex::encode(reference(&params, &data)),
                    "{what}"
                );
            }
        }
    }
}
