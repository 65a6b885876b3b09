//! The input path's tests: opening, windows, reads, truncation and SIGBUS.

use super::*;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use crate::{Algorithm, BackendChoice, Hasher, HasherOptions, Progress, TreeParams};

/// A hook told (the file, the window's bytes of the input) by
/// [`InputFile::map`] each time a window has been mapped and read in, on
/// the thread that did it: a test can wait for that instead of for time
/// to pass.
type WindowHook = Box<dyn Fn(&File, std::ops::Range<u64>) + Send>;
pub(super) static WINDOW_READ_IN: Mutex<Option<WindowHook>> = Mutex::new(None);

fn input_file(path: &Path) -> InputFile {
    match Source::open(path).unwrap() {
        Source::File(f) => f,
        Source::Sequential(_) => panic!("a regular file with bytes is read by ranges"),
    }
}

#[test]
fn a_file_that_grows_or_is_touched_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    std::fs::write(&path, vec![1u8; 10_000]).unwrap();

    let f = input_file(&path);
    assert!(f.check_unchanged().is_ok());
    File::options()
        .append(true)
        .open(&path)
        .unwrap()
        .set_len(20_000)
        .unwrap();
    assert!(matches!(f.check_unchanged(), Err(HashError::Changed(_))));

    let f = input_file(&path);
    let later = SystemTime::now() + Duration::from_secs(5);
    File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(later)
        .unwrap();
    assert!(matches!(f.check_unchanged(), Err(HashError::Changed(_))));
}

#[test]
fn a_file_that_shrinks_is_an_error_when_mapped_or_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    std::fs::write(&path, vec![1u8; 100_000]).unwrap();
    let f = input_file(&path);
    assert_eq!(&f.map(4096, 8192).unwrap()[..], &[1u8; 8192][..]);
    File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(50_000)
        .unwrap();
    let err = f.map(40_000, 20_000).err().unwrap();
    assert!(
        err.to_string().contains("shrank from 100000 to 50000"),
        "{err}"
    );
    let mut buf = vec![0u8; 20_000];
    let err = f.read_exact_at(&mut buf, 40_000).err().unwrap();
    assert!(err.to_string().contains("shrank"), "{err}");
}

#[test]
fn an_open_file_is_read_from_its_offset() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    let data: Vec<u8> = (0..5000u32).map(|i| i as u8).collect();
    std::fs::write(&path, &data).unwrap();
    let mut file = File::open(&path).unwrap();
    file.read_exact(&mut [0u8; 100]).unwrap();
    let Source::File(mut f) = Source::from_file(file.try_clone().unwrap()).unwrap() else {
        panic!("a regular file");
    };
    assert_eq!(f.len(), 4900);
    let mut buf = vec![0u8; 4900];
    f.read_exact_at(&mut buf, 0).unwrap();
    assert_eq!(buf, data[100..]);
    assert_eq!(&f.map(0, 10).unwrap()[..], &data[100..110]);
    f.seek_past().unwrap();
    assert_eq!(file.stream_position().unwrap(), 5000);
}

#[test]
fn a_read_error_names_its_offset_and_a_short_read_is_a_shrink() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    std::fs::write(&path, vec![5u8; 10_000]).unwrap();
    let mut file = File::open(&path).unwrap();
    file.read_exact(&mut [0u8; 100]).unwrap();
    let Source::File(f) = Source::from_file(file).unwrap() else {
        panic!("a regular file");
    };
    // An I/O error part-way: the file offset where it happened.
    let err = f.read_error(io::Error::from_raw_os_error(libc::EIO), 4096);
    assert_eq!(
        err.to_string(),
        "read error at byte 4196: Input/output error"
    );
    // The file ending early is a shrink, whatever the offset.
    let eof = io::Error::from(io::ErrorKind::UnexpectedEof);
    assert!(matches!(f.read_error(eof, 9000), HashError::Changed(_)));
}

#[test]
fn empty_and_special_files_are_sequential_and_directories_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    std::fs::write(&empty, b"").unwrap();
    assert!(matches!(
        Source::open(&empty).unwrap(),
        Source::Sequential(_)
    ));
    assert!(matches!(
        Source::open(Path::new("/dev/null")).unwrap(),
        Source::Sequential(_)
    ));
    let err = Source::open(dir.path()).err().unwrap();
    assert_eq!(err.raw_os_error(), Some(libc::EISDIR));
    // sysfs files claim 4096 bytes and refuse to be mapped: sequential.
    let sys = Path::new("/sys/kernel/mm/transparent_hugepage/enabled");
    if sys.exists() {
        assert!(matches!(Source::open(sys).unwrap(), Source::Sequential(_)));
    }
}

/// The SIGBUS handler of this test binary: what the command-line tool's
/// does, counting the faults recovered.
static FAULTS: AtomicUsize = AtomicUsize::new(0);

extern "C" fn on_sigbus(_: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo_t with SA_SIGINFO.
    let (code, address) = unsafe { ((*info).si_code, (*info).si_addr() as usize) };
    // SAFETY: a SIGBUS handler, on the thread that took the fault, which
    // the kernel raised for that thread's access at `address`; it
    // returns only when `recover` says true.
    if crate::sigbus::raised_by_an_access(code) && unsafe { crate::sigbus::recover(address) } {
        FAULTS.fetch_add(1, Ordering::SeqCst);
        return;
    }
    // SAFETY: abort(3) ends the process, as the default action would.
    unsafe { libc::abort() };
}

/// Cuts the file to `to` bytes when the first piece has been hashed,
/// once `ready` says that the window after it has been read in.
struct CutWhenReady {
    path: std::path::PathBuf,
    to: u64,
    /// Grown back to this size after the cut, the time set back.
    regrow: Option<u64>,
    ready: Mutex<mpsc::Receiver<()>>,
    done: AtomicBool,
}

impl Progress for CutWhenReady {
    fn advance(&self, _bytes: u64) {
        if !self.done.swap(true, Ordering::SeqCst) {
            // The timeout only keeps a broken test from hanging: the
            // window is read in within milliseconds.
            let ready = self
                .ready
                .lock()
                .unwrap()
                .recv_timeout(Duration::from_secs(60));
            ready.expect("the window that holds the cut was never read in");
            let file = File::options().write(true).open(&self.path).unwrap();
            let modified = file.metadata().unwrap().modified().unwrap();
            file.set_len(self.to).unwrap();
            if let Some(len) = self.regrow {
                file.set_len(len).unwrap();
                file.set_modified(modified).unwrap();
            }
        }
    }
}

/// The file is cut while the window after the first is mapped and read
/// in but not yet hashed: hashing it reads pages that no longer exist,
/// which raises SIGBUS; the fault is recovered and the input ends in an
/// error, not a digest and not a crash. Each step waits for the one
/// before it (the window read in, then the cut), never for time.
#[test]
fn a_file_cut_under_the_window_being_hashed_gets_an_error_not_a_crash() {
    let (err, faulted) = cut_under_the_window_being_hashed(None);
    assert!(
        faulted,
        "the cut was expected to land in the window being hashed"
    );
    assert!(
        err.to_string().contains("shrank from 8388608 to 1572864"),
        "{err}"
    );
}

/// The same cut, then the file grown back to its size with its time
/// set back: a change of the file, not a read error, whether the
/// window's pages faulted between the cut and the growth
/// (`InputFile::window_failed`) or were read again as zeros.
#[test]
fn a_file_cut_and_grown_back_under_a_window_is_a_change() {
    let (err, _) = cut_under_the_window_being_hashed(Some(8 << 20));
    // Seen short (a read between the cut and the growth) or grown back
    // (its change time moved): a change either way, never a read error.
    assert!(matches!(&err, HashError::Changed(_)), "{err}");
}

/// The error of hashing an 8 MiB file cut to 1.5 MiB (and grown back to
/// `regrow` bytes) under the second window, once it is read in, and
/// whether a read of the window faulted.
fn cut_under_the_window_being_hashed(regrow: Option<u64>) -> (HashError, bool) {
    // SAFETY: installs a handler that only calls async-signal-safe code.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigbus as *const () as libc::sighandler_t;
        action.sa_flags = libc::SA_SIGINFO;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut());
    }
    // One such test at a time: the hook and the fault count are global.
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let faults_before = FAULTS.load(Ordering::SeqCst);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.bin");
    std::fs::write(&path, vec![9u8; 8 << 20]).unwrap();
    // A change time the kernel's clock tells from the file's making.
    std::thread::sleep(Duration::from_millis(20));
    // Windows of about 1 MiB: the second (1 to 2 MiB) is read in by a
    // helper thread while the first is hashed; the cut at 1.5 MiB takes
    // half of it.
    let (piece, cut) = (1usize << 20, 3u64 << 19);
    let inode = std::fs::metadata(&path).unwrap().ino();
    let (read_in, ready) = mpsc::channel();
    let read_in = Mutex::new(read_in);
    *WINDOW_READ_IN.lock().unwrap() = Some(Box::new(move |file: &File, window| {
        if window.contains(&cut) && file.metadata().is_ok_and(|m| m.ino() == inode) {
            let _ = read_in.lock().unwrap().send(());
        }
    }));
    let progress = CutWhenReady {
        path: path.clone(),
        to: cut,
        regrow,
        ready: Mutex::new(ready),
        done: AtomicBool::new(false),
    };
    let hasher = Hasher::new(HasherOptions {
        backend: BackendChoice::Cpu,
        piece_bytes: Some(piece),
        ..Default::default()
    })
    .unwrap();
    let params = TreeParams::new(Algorithm::Sha3_256, 2, 4).unwrap();
    let result = hasher.hash_path(&params, &path, &progress);
    *WINDOW_READ_IN.lock().unwrap() = None;
    let err = result.expect_err("a file cut short has no digest");
    (err, FAULTS.load(Ordering::SeqCst) > faults_before)
}
