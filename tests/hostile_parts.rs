//! Parts that no honest treehash makes, and sets that mix versions of a
//! file: every such part or set is refused with a reason, never joined and
//! never a panic. Tests of parts made and joined as they should be belong in
//! tests/parts.rs; this file holds what an
//! attacker, a faulty writer or a file changed between the parts gives.

mod common;

use std::fs::File;
use std::path::Path;
use std::time::Duration;

use common::parts::{hasher, resealed, seal as sealed, write};
use treehash::parts::{JoinError, NameRule, Part, PartError, join_bytes};
use treehash::standard::{Standard, StandardParams};
use treehash::{Algorithm, Params, TreeParams};

/// The header of a standard part (format version 2, docs/SPEC.md) with
/// every field given, no name and no customization string, no identity;
/// the bytes after the header are `rest`.
#[allow(clippy::too_many_arguments)]
fn standard_part(
    mode: u8,
    function: u8,
    block: u32,
    file_len: u64,
    chunks: (u64, u64),
    chunk_count: u64,
    values: u64,
    first_len: u32,
    rest: &[u8],
) -> Vec<u8> {
    let mut b = b"\x89THPART\n".to_vec();
    b.extend([2, mode, function, 0]);
    b.extend(block.to_le_bytes());
    b.extend(32u32.to_le_bytes()); // output length
    b.extend(0u32.to_le_bytes()); // customization length
    b.extend(file_len.to_le_bytes());
    b.extend(0i64.to_le_bytes()); // modification time (unknown)
    b.extend(1u64.to_le_bytes()); // N
    b.extend(0u64.to_le_bytes()); // I
    b.extend([0; 24]); // host, inode, change time (unknown)
    b.extend(chunks.0.to_le_bytes());
    b.extend(chunks.1.to_le_bytes());
    b.extend(chunk_count.to_le_bytes());
    b.extend(values.to_le_bytes());
    b.extend(first_len.to_le_bytes());
    b.extend(0u16.to_le_bytes()); // name length
    assert_eq!(b.len(), 118);
    b.extend_from_slice(rest);
    sealed(b)
}

fn inconsistent(bytes: &[u8]) -> String {
    match Part::from_bytes(bytes) {
        Err(PartError::Inconsistent(why)) => why,
        other => panic!("a crafted part was not refused as inconsistent: {other:?}"),
    }
}

/// The parts that made the join's sums overflow (a panic with overflow
/// checks on, a wrapped sum and a joined digest without): each is refused
/// as inconsistent, naming the field.
#[test]
fn parts_whose_sizes_overflow_are_refused() {
    // KT128, a file of 2^64 − 1 bytes in no chunks.
    let kt = standard_part(2, 1, 8192, u64::MAX, (0, 0), 0, 0, 0, &[]);
    assert!(
        inconsistent(&kt).contains("longer than any file"),
        "{}",
        inconsistent(&kt)
    );
    // KT128, the longest file a part may be of, its counts those of the
    // file, and none of the 2^50 values its chunks call for.
    let n = (i64::MAX as u64 + 1) / 8192;
    let kt = standard_part(2, 1, 8192, i64::MAX as u64, (0, n), n, n - 1, 8192, &[]);
    assert!(inconsistent(&kt).contains("where its fields need"));
    // ParallelHash256 with B = 1: 2^58 chunks, whose 2^58 values of 64
    // bytes (2^64 bytes, 0 in 64-bit arithmetic) are not there.
    let n = 1u64 << 58;
    let ph = standard_part(3, 2, 1, n, (0, n), n, n, 0, &[]);
    assert!(inconsistent(&ph).contains("where its fields need"));
    // An LI part of a file of 2^64 − 1 bytes (W's sum with a prefix).
    let dir = tempfile::tempdir().unwrap();
    let params =
        TreeParams::with_options(Algorithm::Sha3_256, 2, 4, None, b"key".to_vec(), None).unwrap();
    let path = write(dir.path(), "f", &[1; 5000]);
    let part = hasher(4096)
        .hash_part(&params, &path, 0, 2, &())
        .unwrap()
        .part
        .to_bytes();
    let huge = resealed(&part, &|b| {
        b[48..56].copy_from_slice(&u64::MAX.to_le_bytes())
    });
    assert!(matches!(huge, Err(PartError::Inconsistent(why)) if why.contains("longer than any")));
}

/// A field that its flag says is unknown must be 0: one part has one
/// encoding, which reads back byte for byte.
#[test]
fn unknown_fields_must_be_zero() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "f", &[3; 20_000]);
    let hasher = hasher(4096);
    let li = TreeParams::new(Algorithm::Sha3_256, 2, 4).unwrap();
    let kt = StandardParams::new(Standard::Kt128);
    // (the part, the flags' offset, the time's, the identity's)
    let cases: [(Params, usize, usize, usize); 2] = [
        (Params::Tree(li), 11, 56, 80),
        (Params::Standard(kt), 11, 32, 56),
    ];
    for (params, flags, time, identity) in cases {
        let part = hasher
            .hash_part(&params, &path, 1, 2, &())
            .unwrap()
            .part
            .to_bytes();
        assert_eq!(part[flags] & 6, 6, "the time and the identity are known");
        // The flag cleared, the field left: refused.
        let time_left = resealed(&part, &|b| b[flags] &= !2);
        assert!(matches!(time_left, Err(PartError::Inconsistent(w)) if w.contains("modification")));
        let identity_left = resealed(&part, &|b| b[flags] &= !4);
        assert!(matches!(identity_left, Err(PartError::Inconsistent(w)) if w.contains("identity")));
        // The flag cleared and the field 0: a part that writes back as read.
        let mut bare = part[..part.len() - 16].to_vec();
        bare[flags] &= !6;
        bare[time..time + 8].fill(0);
        bare[identity..identity + 24].fill(0);
        let bare = sealed(bare);
        let read = Part::from_bytes(&bare).unwrap();
        assert_eq!(read.modified_ns(), None);
        assert_eq!(read.to_bytes(), bare);
    }
}

/// A part of format version 1 (before the identity) is refused by its
/// version, with a way out.
#[test]
fn a_part_of_another_version_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "f", &[3; 1000]);
    let params = TreeParams::new(Algorithm::Sha3_256, 1, 4).unwrap();
    let part = hasher(4096)
        .hash_part(&params, &path, 0, 1, &())
        .unwrap()
        .part
        .to_bytes();
    let old = resealed(&part, &|b| b[8] = 1).unwrap_err();
    assert_eq!(old, PartError::Version(1));
    assert!(old.to_string().contains("it reads version 2"), "{old}");
}

/// Sets `0 .. count` of `path` under `params`, parts `from..` made after
/// `between` ran.
fn parts_around(
    params: &Params,
    path: &Path,
    count: u64,
    from: u64,
    between: &dyn Fn(),
) -> Vec<Vec<u8>> {
    let hasher = hasher(4096);
    let part = |index| {
        hasher
            .hash_part(params, path, index, count, &())
            .unwrap()
            .part
            .to_bytes()
    };
    let mut set: Vec<_> = (0..from).map(part).collect();
    between();
    set.extend((from..count).map(part));
    set
}

/// Rewrites `path` in place with `data`, of its size, and sets its
/// modification time back: what `rsync --inplace -t` does to a changed file.
fn rewrite_keeping_the_time(path: &Path, data: &[u8]) {
    let before = std::fs::metadata(path).unwrap().modified().unwrap();
    // A change time the kernel's clock can tell from the first one.
    std::thread::sleep(Duration::from_millis(20));
    let file = File::options().write(true).open(path).unwrap();
    std::os::unix::fs::FileExt::write_all_at(&file, data, 0).unwrap();
    file.set_modified(before).unwrap();
}

/// Parts made on one host from two versions of a file with one name, size
/// and modification time are refused by the change time; a file replaced
/// under its name by a copy with the time set back, by the inode. Both for
/// an LI tree and for KT128.
#[test]
fn parts_of_two_versions_of_a_file_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let data = vec![5u8; 50_000];
    let li = Params::Tree(TreeParams::new(Algorithm::Sha3_256, 2, 4).unwrap());
    let kt = Params::Standard(StandardParams::new(Standard::Kt128));
    for params in [li, kt] {
        let path = write(dir.path(), "data", &data);
        let rewritten = parts_around(&params, &path, 3, 2, &|| {
            rewrite_keeping_the_time(&path, &[6; 50_000]);
        });
        match join_bytes(&rewritten, NameRule::default()) {
            Err(JoinError::OtherVersion {
                at: 2,
                other: 0,
                what: "change time",
                ..
            }) => {}
            other => panic!("{params:?}: a rewritten file's parts: {other:?}"),
        }
        let replaced = parts_around(&params, &path, 3, 1, &|| {
            let copy = write(dir.path(), "copy", &[7; 50_000]);
            let time = std::fs::metadata(&path).unwrap().modified().unwrap();
            File::options()
                .write(true)
                .open(&copy)
                .unwrap()
                .set_modified(time)
                .unwrap();
            std::fs::rename(&copy, &path).unwrap();
        });
        let refused = join_bytes(&replaced, NameRule::default()).unwrap_err();
        assert!(
            matches!(
                refused,
                JoinError::OtherVersion {
                    at: 1,
                    what: "inode",
                    ..
                }
            ),
            "{params:?}: a replaced file's parts: {refused:?}"
        );
        let message = refused.to_string();
        assert!(
            message.starts_with("part #2: its file's inode (")
                && message.ends_with("the file was changed or replaced between the parts"),
            "{message}"
        );
    }
}

/// Parts of different hosts are not held against each other by inode and
/// change time (a copy of the file on each host has its own), and a part
/// whose identity is unknown by none: such sets join, as docs/SPEC.md says.
#[test]
fn identities_of_different_hosts_are_not_compared() {
    let dir = tempfile::tempdir().unwrap();
    let data = common::spec_input(30_000);
    let params = Params::Tree(TreeParams::new(Algorithm::Sha3_256, 2, 4).unwrap());
    let path = write(dir.path(), "data", &data);
    let set = parts_around(&params, &path, 3, 3, &|| {});
    let want = join_bytes(&set, NameRule::default()).unwrap().digest;
    // Part 1 "made on another host": another tag, inode and change time.
    let mut elsewhere = set.clone();
    let moved = resealed(&set[1], &|b| {
        b[80] ^= 1;
        b[88] ^= 1;
        b[96] ^= 1;
    })
    .unwrap();
    elsewhere[1] = moved.to_bytes();
    assert_eq!(
        join_bytes(&elsewhere, NameRule::default()).unwrap().digest,
        want
    );
    // Part 2's identity unknown.
    let mut unknown = set.clone();
    let mut bare = set[2][..set[2].len() - 16].to_vec();
    bare[11] &= !4;
    bare[80..104].fill(0);
    unknown[2] = sealed(bare);
    assert_eq!(
        join_bytes(&unknown, NameRule::default()).unwrap().digest,
        want
    );
    // The same host's part with another change time is still refused,
    // whatever part of the set is first.
    let mut mixed = vec![elsewhere[1].clone(), set[0].clone(), set[2].clone()];
    mixed[2] = resealed(&set[2], &|b| b[96] ^= 1).unwrap().to_bytes();
    assert!(matches!(
        join_bytes(&mixed, NameRule::default()),
        Err(JoinError::OtherVersion {
            at: 2,
            other: 1,
            ..
        })
    ));
}
