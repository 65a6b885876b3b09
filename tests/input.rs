//! The input path through the public API: a file that shrinks while it is
//! hashed, a reader that fails part-way, files of one piece. A file cut
//! under the window being hashed (SIGBUS survived) is a unit test of
//! src/input.rs, which can wait for the window to be read in; standard-input
//! offsets and a closed standard input are in cli/tests/cli_io.rs.

mod common;

use std::io::{self, Read};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use common::reference_tree;
use treehash::{Algorithm, BackendChoice, HashError, Hasher, HasherOptions, Progress, TreeParams};

fn cpu_hasher(piece_bytes: usize) -> Hasher {
    Hasher::new(
        HasherOptions::default()
            .with_backend(BackendChoice::Cpu)
            .with_piece_bytes(Some(piece_bytes)),
    )
    .unwrap()
}

/// Cuts the file to `to` bytes once the first piece has been hashed.
struct TruncateAfterFirstPiece {
    path: PathBuf,
    to: u64,
    done: AtomicBool,
}

impl TruncateAfterFirstPiece {
    fn new(path: &std::path::Path, to: u64) -> Self {
        TruncateAfterFirstPiece {
            path: path.to_path_buf(),
            to,
            done: AtomicBool::new(false),
        }
    }
}

impl Progress for TruncateAfterFirstPiece {
    fn advance(&self, _bytes: u64) {
        if !self.done.swap(true, Ordering::SeqCst) {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(&self.path)
                .unwrap();
            file.set_len(self.to).unwrap();
        }
    }
}

#[test]
fn a_file_that_shrinks_while_hashed_gets_an_error_and_no_digest() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shrinks.bin");
    std::fs::write(&path, vec![7u8; 16 << 20]).unwrap();
    let params = TreeParams::new(Algorithm::Sha3_256, 2, 4).unwrap();
    // 1 MiB pieces: each helper thread maps one window ahead at most (four
    // helpers: nothing past 5 MiB), so the windows mapped before the cut
    // stay whole, and a later one finds the file shorter.
    let progress = TruncateAfterFirstPiece::new(&path, 10 << 20);
    let err = cpu_hasher(1 << 20)
        .hash_path(&params, &path, &progress)
        .expect_err("a file that shrank has no digest");
    assert!(matches!(err, HashError::Changed(_)), "{err}");
    assert!(
        err.to_string().contains("shrank from 16777216 to 10485760"),
        "{err}"
    );
}

/// Yields `good` bytes, then fails.
struct FailsAfter {
    good: usize,
}

impl Read for FailsAfter {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.good == 0 {
            return Err(io::Error::from_raw_os_error(libc::EIO));
        }
        let n = buf.len().min(self.good);
        buf[..n].fill(3);
        self.good -= n;
        Ok(n)
    }
}

#[test]
fn a_reader_that_fails_part_way_gets_an_error_and_no_digest() {
    let params = TreeParams::new(Algorithm::Sha3_256, 4, 4).unwrap();
    for good in [0, 1, 1 << 20, (3 << 20) + 5] {
        let err = cpu_hasher(1 << 20)
            .hash_reader(&params, &mut FailsAfter { good })
            .expect_err("a failed read has no digest");
        assert!(
            matches!(&err, HashError::Io(e) if e.raw_os_error() == Some(libc::EIO)),
            "{err}"
        );
    }
}

/// A file of one piece is read into memory when small and mapped when not
/// (`SMALL_FILE_READ`), and hashed inline on the calling thread when
/// smaller still (`INLINE_MAX`), else on the pool: the same digests as the
/// reference on both sides of those sizes, with and without a prefix, on
/// either backend choice that hashes on the CPU, from one thread and from
/// several at once.
#[test]
fn files_of_one_piece_read_or_mapped_give_the_reference_digest() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("one-piece");
    let read = treehash::thresholds::SMALL_FILE_READ;
    let alone = treehash::thresholds::INLINE_MAX as usize;
    let sizes = [
        0,
        1,
        135,
        136,
        137,
        alone - 1,
        alone,
        alone + 1,
        read - 1,
        read,
        read + 1,
        (1 << 20) + 7,
    ];
    assert!(alone < read && read < (1 << 20), "the sizes straddle both");
    let prefixes: [&[u8]; 2] = [b"", b"key"];
    for backend in [BackendChoice::Cpu, BackendChoice::Auto] {
        let hasher = Hasher::new(
            HasherOptions::default()
                .with_backend(backend)
                // Every size above is one piece.
                .with_piece_bytes(Some(4 << 20)),
        )
        .unwrap();
        for len in sizes {
            let data: Vec<u8> = (0..len).map(|i| (i * 31 + len) as u8).collect();
            std::fs::write(&path, &data).unwrap();
            for prefix in prefixes {
                let params = TreeParams::with_options(
                    Algorithm::Sha3_256,
                    3,
                    4,
                    None,
                    prefix.to_vec(),
                    None,
                )
                .unwrap();
                let want = treehash_reference::tree_hash(&reference_tree(&params), &data);
                let hash = || hasher.hash_path(&params, &path, &()).unwrap();
                let mut outputs = vec![hash()];
                std::thread::scope(|s| {
                    let threads: Vec<_> = (0..4).map(|_| s.spawn(hash)).collect();
                    outputs.extend(threads.into_iter().map(|t| t.join().unwrap()));
                });
                for got in outputs {
                    assert_eq!(
                        got.digest, want,
                        "{backend:?}, {len} bytes, prefix {prefix:?}"
                    );
                    assert_eq!(got.bytes, len as u64);
                }
            }
        }
        // A file of several pieces after the small ones.
        let data: Vec<u8> = (0..(9 << 20) + 5).map(|i: usize| (i % 251) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let params = TreeParams::new(Algorithm::Sha3_256, 5, 4).unwrap();
        let got = hasher.hash_path(&params, &path, &()).unwrap();
        assert_eq!(
            got.digest,
            treehash_reference::tree_hash(&reference_tree(&params), &data)
        );
    }
}

/// Rewrites the whole file in place with `with` (its size) and sets the
/// modification time back, as `rsync --inplace -t` leaves a changed file.
fn rewrite_in_place(path: &std::path::Path, with: &[u8]) {
    use std::os::unix::fs::FileExt;
    let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    let modified = file.metadata().unwrap().modified().unwrap();
    file.write_all_at(with, 0).unwrap();
    file.set_modified(modified).unwrap();
}

/// Rewrites the file in place, the time set back, once the first piece has
/// been hashed.
struct RewriteAfterFirstPiece {
    path: PathBuf,
    with: Vec<u8>,
    done: AtomicBool,
}

impl Progress for RewriteAfterFirstPiece {
    fn advance(&self, _bytes: u64) {
        if !self.done.swap(true, Ordering::SeqCst) {
            rewrite_in_place(&self.path, &self.with);
        }
    }
}

/// A rewrite that keeps the size and sets the modification time back is
/// seen by the change time: an error, never a digest of neither version;
/// for an LI tree, plain SHA3-256 and KT128.
#[test]
fn a_rewrite_that_keeps_size_and_time_gets_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rewritten.bin");
    let kt = treehash::standard::StandardParams::new(treehash::standard::Standard::Kt128);
    let cases: [treehash::Params; 3] = [
        TreeParams::new(Algorithm::Sha3_256, 2, 4).unwrap().into(),
        TreeParams::new(Algorithm::Sha3_256, 0, 4).unwrap().into(),
        kt.into(),
    ];
    for params in cases {
        std::fs::write(&path, vec![1u8; 8 << 20]).unwrap();
        // A change time the kernel's clock tells from the file's making.
        std::thread::sleep(std::time::Duration::from_millis(20));
        let progress = RewriteAfterFirstPiece {
            path: path.clone(),
            with: vec![2u8; 8 << 20],
            done: AtomicBool::new(false),
        };
        let err = cpu_hasher(1 << 20)
            .hash_path(&params, &path, &progress)
            .expect_err("a rewritten file has no digest");
        assert!(
            matches!(&err, HashError::Changed(why) if why.contains("change time")),
            "{params:?}: {err}"
        );
    }
}

/// Fifty races of a hash against a rewrite in place with the time set
/// back, at random moments: each result is the digest of the old bytes,
/// of the new bytes, or an error that the file changed; never another.
#[test]
fn races_with_a_rewrite_give_no_wrong_digest() {
    use rand::{RngExt, SeedableRng};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("raced.bin");
    let params = TreeParams::new(Algorithm::Sha3_256, 3, 4).unwrap();
    let (old, new) = (vec![1u8; 16 << 20], vec![2u8; 16 << 20]);
    let hasher = cpu_hasher(1 << 20);
    let digest = |data: &[u8]| hasher.hash_bytes(&params, data).unwrap().digest;
    let (want_old, want_new) = (digest(&old), digest(&new));
    let mut rng = rand::rngs::StdRng::seed_from_u64(31);
    let mut seen = [0; 3];
    for _ in 0..50 {
        std::fs::write(&path, &old).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let delay = std::time::Duration::from_micros(rng.random_range(0..30_000));
        let got = std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(delay);
                rewrite_in_place(&path, &new);
            });
            hasher.hash_path(&params, &path, &())
        });
        match got {
            Ok(out) if out.digest == want_old => seen[0] += 1,
            Ok(out) if out.digest == want_new => seen[1] += 1,
            Ok(out) => panic!("a digest of neither version: {}", hex::encode(out.digest)),
            Err(HashError::Changed(_)) => seen[2] += 1,
            Err(e) => panic!("{e}"),
        }
    }
    eprintln!("old, new, changed: {seen:?}");
}
