//! Helpers of the tests of parts and joins (tests/parts.rs,
//! tests/hostile_parts.rs, and the tool's cli/tests/cli_parts.rs, which
//! includes this file).

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use sha3::Digest;
use treehash::parts::{JoinError, NameRule, Part, PartError, join_bytes};
use treehash::{BackendChoice, Hasher, HasherOptions};

/// A CPU hasher of two threads cutting pieces of `piece_bytes`, so that
/// parts cross piece and stripe boundaries often.
pub fn hasher(piece_bytes: usize) -> Hasher {
    Hasher::new(
        HasherOptions::default()
            .with_backend(BackendChoice::Cpu)
            .with_threads(Some(2))
            .with_piece_bytes(Some(piece_bytes)),
    )
    .unwrap()
}

/// Writes `data` to `dir/name`.
pub fn write(dir: &Path, name: &str, data: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, data).unwrap();
    path
}

/// Why the join refuses `set` (which it must).
pub fn refused(set: &[Vec<u8>]) -> JoinError {
    match join_bytes(set, NameRule::default()) {
        Ok(_) => panic!("a broken set was joined"),
        Err(e) => e,
    }
}

/// `part` with its body edited by `edit` and its check value made anew
/// (the first 16 bytes of SHA3-256 of the body, docs/SPEC.md), as read.
pub fn resealed(part: &[u8], edit: &dyn Fn(&mut Vec<u8>)) -> Result<Part, PartError> {
    let mut bytes = part[..part.len() - 16].to_vec();
    edit(&mut bytes);
    Part::from_bytes(&seal(bytes))
}

/// `body` (a part's bytes before its check value) with its check value:
/// the first 16 bytes of its SHA3-256 (docs/SPEC.md).
pub fn seal(mut body: Vec<u8>) -> Vec<u8> {
    let check = sha3::Sha3_256::digest(&body);
    body.extend_from_slice(&check[..16]);
    body
}

/// Files in `dir` that a part tells from `path`, which holds `data`: one of
/// another size, one of the same bytes with another modification time, and
/// `path` under another name; each with the field a join names.
pub fn other_files(dir: &Path, path: &Path, data: &[u8]) -> [(PathBuf, &'static str); 3] {
    let shorter = write(dir, "shorter", &data[..data.len() - 1]);
    let touched = write(dir, "touched", data);
    let old = SystemTime::UNIX_EPOCH + Duration::from_secs(1 << 30);
    std::fs::File::options()
        .write(true)
        .open(&touched)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let renamed = dir.join("renamed");
    std::fs::hard_link(path, &renamed).unwrap();
    [
        (shorter, "file size"),
        (touched, "modification time"),
        (renamed, "file name"),
    ]
}

/// The host tag a part made here records (docs/SPEC.md, "The format"): the
/// first 8 bytes of SHA3-256("treehash host v1" ‖ 0x00 ‖ /etc/machine-id ‖
/// 0x00 ‖ the host name), each file's bytes as they are (empty if absent).
pub fn host_tag() -> [u8; 8] {
    let read = |path| std::fs::read(path).unwrap_or_default();
    let digest = sha3::Sha3_256::new()
        .chain_update(b"treehash host v1\0")
        .chain_update(read("/etc/machine-id"))
        .chain_update(b"\0")
        .chain_update(read("/proc/sys/kernel/hostname"))
        .finalize();
    digest[..8].try_into().unwrap()
}

/// A file's change time (`st_ctime`) in nanoseconds since 1970, as a part
/// records it.
pub fn change_time_ns(meta: &std::fs::Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt;
    (meta.ctime() * 1_000_000_000 + meta.ctime_nsec()) as u64
}
