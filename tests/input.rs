//! The input path through the public API: a file that shrinks while it is
//! hashed, a reader that fails part-way, standard-input offsets are in
//! tests/cli.rs.

use std::io::{self, Read};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use treehash::{Algorithm, BackendChoice, HashError, Hasher, HasherOptions, Progress, TreeParams};

fn cpu_hasher(piece_bytes: usize) -> Hasher {
    Hasher::new(HasherOptions {
        backend: BackendChoice::Cpu,
        piece_bytes: Some(piece_bytes),
        ..Default::default()
    })
    .unwrap()
}

/// Cuts the file to `to` bytes once the first piece has been hashed.
struct TruncateAfterFirstPiece {
    path: PathBuf,
    to: u64,
    done: AtomicBool,
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
    // 1 MiB pieces: the windows mapped ahead of the cut (two at most) stay
    // whole, and a later one finds the file shorter.
    let progress = TruncateAfterFirstPiece {
        path: path.clone(),
        to: 10 << 20,
        done: AtomicBool::new(false),
    };
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
