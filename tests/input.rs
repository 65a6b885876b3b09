//! The input path through the public API: a file that shrinks while it is
//! hashed (between windows, and under a window being hashed, where SIGBUS is
//! survived), a reader that fails part-way. Standard-input offsets are in
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

/// Cuts the file to `to` bytes once the first piece has been hashed, after
/// waiting `wait` (time for the helper thread to read in the next window).
struct TruncateAfterFirstPiece {
    path: PathBuf,
    to: u64,
    wait: std::time::Duration,
    done: AtomicBool,
}

impl TruncateAfterFirstPiece {
    fn new(path: &std::path::Path, to: u64, wait_ms: u64) -> Self {
        TruncateAfterFirstPiece {
            path: path.to_path_buf(),
            to,
            wait: std::time::Duration::from_millis(wait_ms),
            done: AtomicBool::new(false),
        }
    }
}

impl Progress for TruncateAfterFirstPiece {
    fn advance(&self, _bytes: u64) {
        if !self.done.swap(true, Ordering::SeqCst) {
            std::thread::sleep(self.wait);
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
    let progress = TruncateAfterFirstPiece::new(&path, 10 << 20, 0);
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

/// SIGBUS handler of this test binary: what the command-line tool does.
static FAULTS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

extern "C" fn on_sigbus(_: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo_t with SA_SIGINFO.
    let address = unsafe { (*info).si_addr() } as usize;
    if treehash::sigbus::recover(address) {
        FAULTS.fetch_add(1, Ordering::SeqCst);
        return;
    }
    // SAFETY: abort(3) ends the process, as the default action would.
    unsafe { libc::abort() };
}

#[test]
fn a_file_cut_under_the_window_being_hashed_gets_an_error_not_a_crash() {
    // SAFETY: installs a handler that only calls async-signal-safe code.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigbus as *const () as libc::sighandler_t;
        action.sa_flags = libc::SA_SIGINFO;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut());
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.bin");
    std::fs::write(&path, vec![9u8; 8 << 20]).unwrap();
    let params = TreeParams::new(Algorithm::Sha3_256, 2, 4).unwrap();
    // 1 MiB windows: window 2 (1 to 2 MiB) is read in while window 1 is
    // hashed; the cut at 1.5 MiB takes half of it away.
    // The wait gives the helper thread time to read window 2 in first.
    let progress = TruncateAfterFirstPiece::new(&path, 3 << 19, 200);
    let err = cpu_hasher(1 << 20)
        .hash_path(&params, &path, &progress)
        .expect_err("a file cut short has no digest");
    assert!(
        err.to_string().contains("shrank from 8388608 to 1572864"),
        "{err}"
    );
    assert!(
        FAULTS.load(Ordering::SeqCst) >= 1,
        "the cut was expected to land in a window being hashed"
    );
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
        let hasher = Hasher::new(HasherOptions {
            backend,
            // Every size above is one piece.
            piece_bytes: Some(4 << 20),
            ..Default::default()
        })
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
                let want = treehash::reference::tree_hash(&params, &data);
                let hash = || {
                    hasher
                        .hash_path(&params, &path, &treehash::NoProgress)
                        .unwrap()
                };
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
        let got = hasher
            .hash_path(&params, &path, &treehash::NoProgress)
            .unwrap();
        assert_eq!(got.digest, treehash::reference::tree_hash(&params, &data));
    }
}
