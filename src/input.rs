//! Opening an input. A regular file (standard input too, when it is one) is
//! read from where its offset stands to its end, by ranges: mapped a window
//! at a time or read with pread, never mapped whole. Everything else (pipes,
//! terminals, character devices, files that report size 0 such as those of
//! /proc) is read as a stream.
//!
//! Mapping stays inside the crate: a mapping handed out as `&[u8]` could
//! change under its reader (see `InputFile::map`).

use std::fs::{File, Metadata};
use std::io::{self, Seek, SeekFrom};
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::SystemTime;

use memmap2::{Advice, Mmap, MmapOptions};
use rayon::prelude::*;

use crate::error::HashError;

/// The name that means standard input.
pub const STDIN_NAME: &str = "-";

/// Whether `name` is [`STDIN_NAME`].
pub fn is_stdin_name(name: &Path) -> bool {
    name.as_os_str() == STDIN_NAME
}

/// Standard input, as a file of its own (a duplicate of descriptor 0).
/// A standard input that was closed when the process started is an error,
/// `EBADF` ("Bad file descriptor"), as coreutils report it, not an empty
/// input.
pub fn open_stdin() -> io::Result<File> {
    if stdin_closed_at_start() {
        return Err(io::Error::from_raw_os_error(libc::EBADF));
    }
    Ok(File::from(io::stdin().as_fd().try_clone_to_owned()?))
}

/// Descriptor 0 was closed when the process started.
static STDIN_CLOSED_AT_START: AtomicBool = AtomicBool::new(false);

/// Runs before `main`, and so before Rust's runtime opens /dev/null on any
/// of descriptors 0 to 2 that it finds closed (so that files opened later
/// cannot take their place): after that, a closed standard input would
/// read as an empty one. The C runtime calls the functions of
/// `.init_array` (ELF) first; a program that loads the library later
/// calls it as the library is loaded.
// SAFETY: `.init_array` holds plain `extern "C" fn()` pointers that the C
// runtime calls once; this one only asks fcntl about a descriptor.
#[used]
#[unsafe(link_section = ".init_array")]
static PROBE_STDIN: extern "C" fn() = probe_stdin;

extern "C" fn probe_stdin() {
    // SAFETY: F_GETFD only reads the descriptor's flags; it fails with EBADF
    // exactly when descriptor 0 is not open.
    let closed = unsafe { libc::fcntl(libc::STDIN_FILENO, libc::F_GETFD) } == -1;
    STDIN_CLOSED_AT_START.store(closed, Ordering::Relaxed);
}

/// Whether standard input was closed when the process started and is still
/// the /dev/null that Rust's runtime put in its place (a program may have
/// opened something else there since, which is then its standard input).
fn stdin_closed_at_start() -> bool {
    if !STDIN_CLOSED_AT_START.load(Ordering::Relaxed) {
        return false;
    }
    // /dev/null is character device 1:3 on Linux.
    let dev_null = libc::makedev(1, 3);
    let stdin = io::stdin().as_fd().try_clone_to_owned().map(File::from);
    stdin
        .and_then(|file| file.metadata())
        .is_ok_and(|meta| meta.file_type().is_char_device() && meta.rdev() == dev_null)
}

/// An opened input, ready to be hashed.
pub(crate) enum Source {
    /// A regular file, read by ranges.
    File(InputFile),
    /// Bytes read in order until the end, in constant memory.
    Stream(File),
}

impl Source {
    /// Opens `name`: a path, or `-` for standard input (which is read by
    /// ranges too when it is a redirected regular file, from its offset).
    pub(crate) fn open(name: &Path) -> io::Result<Source> {
        if is_stdin_name(name) {
            return Self::from_file(open_stdin()?);
        }
        Self::classify(File::open(name)?, Start::AtZero)
    }

    /// Classifies an open file: read by ranges when it is a regular file
    /// with bytes, from its current offset (0 for a file just opened).
    pub(crate) fn from_file(file: File) -> io::Result<Source> {
        Self::classify(file, Start::AtOffset)
    }

    fn classify(mut file: File, start: Start) -> io::Result<Source> {
        let meta = file.metadata()?;
        if meta.is_dir() {
            return Err(io::Error::from_raw_os_error(libc::EISDIR));
        }
        // Files of /sys and /proc report a size that is not their content's:
        // those are read as streams, to their end. A file that will be
        // mapped is asked whether it can be (sysfs refuses); one that will
        // be read whole, which file system it is on: a trial mapping costs
        // system calls and the process's mapping lock, per file of a list.
        let len = meta.len();
        let pseudo = || match usize::try_from(len) {
            Ok(len) if len <= SMALL_FILE_READ => on_a_pseudo_file_system(&file),
            _ => !can_map(&file),
        };
        if !meta.is_file() || len == 0 || pseudo() {
            if meta.file_type().is_fifo() {
                widen_pipe(&file);
            }
            return Ok(Source::Stream(file));
        }
        // Standard input may have been partly read already (`{ head -c 100
        // >/dev/null; treehash -; } < file`): hash what is left, as coreutils do.
        let start = match start {
            Start::AtZero => 0,
            Start::AtOffset => file.stream_position()?.min(len),
        };
        let stamp = Stamp::of(&meta);
        let input = InputFile { file, start, stamp };
        // The kernel reads ahead further for a file it is told is sequential
        // (a file read whole in one call gains nothing from it).
        if input.len() > SMALL_FILE_READ as u64 {
            input.advise(0, input.len(), libc::POSIX_FADV_SEQUENTIAL);
        }
        Ok(Source::File(input))
    }

    /// The input's size when known in advance (for the progress bar).
    pub(crate) fn known_len(&self) -> Option<u64> {
        match self {
            Source::File(f) => Some(f.len()),
            Source::Stream(_) => None,
        }
    }
}

/// Where a file's input starts.
enum Start {
    /// At its first byte: a file just opened.
    AtZero,
    /// Where its offset stands (standard input, partly read already).
    AtOffset,
}

/// Files of one piece up to this size are read into memory, not mapped: for
/// such a file a mapping's system calls and page faults cost more than the
/// read (docs/decisions/0007-small-inputs-inline.md).
pub(crate) const SMALL_FILE_READ: usize = 256 << 10;

/// Whether the file lies on a file system whose files' sizes are not their
/// contents' (procfs, sysfs and their kind).
fn on_a_pseudo_file_system(file: &File) -> bool {
    const PSEUDO: [libc::c_long; 7] = [
        libc::PROC_SUPER_MAGIC,
        libc::SYSFS_MAGIC,
        libc::DEBUGFS_MAGIC,
        libc::TRACEFS_MAGIC,
        libc::SECURITYFS_MAGIC,
        libc::CGROUP_SUPER_MAGIC,
        libc::CGROUP2_SUPER_MAGIC,
    ];
    let mut fs = std::mem::MaybeUninit::<libc::statfs>::uninit();
    // SAFETY: fstatfs writes a statfs into the buffer it is given, which is
    // one, and reads only the descriptor, which `file` keeps open.
    let done = unsafe { libc::fstatfs(file.as_raw_fd(), fs.as_mut_ptr()) } == 0;
    // SAFETY: fstatfs succeeded, so it wrote the whole struct.
    done && PSEUDO.contains(&unsafe { fs.assume_init() }.f_type)
}

/// True when the file system lets this file be mapped (sysfs, for one,
/// refuses with ENODEV).
fn can_map(file: &File) -> bool {
    // SAFETY: a one-byte read-only mapping, dropped at once without being
    // read: nothing can observe its bytes.
    unsafe { MmapOptions::new().len(1).map(file) }.is_ok()
}

/// The host's page size.
pub(crate) fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size).unwrap_or(4096)
}

/// The addresses of the whole pages that hold `bytes`. For bytes of a
/// mapping, all of them are mapped too: a mapping covers whole pages.
pub(crate) fn page_span(bytes: &[u8]) -> std::ops::Range<usize> {
    let page = page_size();
    let start = bytes.as_ptr() as usize;
    start - start % page..(start + bytes.len()).next_multiple_of(page)
}

/// The pipe buffer asked for: a pipe's default 64 KiB makes the writer and
/// treehash take turns many times per megabyte.
const PIPE_BUFFER: libc::c_int = 1 << 20;

/// Bytes of a mapped window read in, or dropped, by one madvise call (see
/// [`InputFile::map`]): few enough that the mmap lock is never held long
/// (docs/decisions/0001-windows-mapped-in-steps.md).
pub(crate) const MAPPING_STEP: usize = 1 << 20;

/// Enlarges a pipe's buffer where the system allows it (up to
/// /proc/sys/fs/pipe-max-size, 1 MiB by default); a refusal changes nothing.
fn widen_pipe(pipe: &File) {
    // SAFETY: F_SETPIPE_SZ takes an int and touches no memory of ours.
    unsafe { libc::fcntl(pipe.as_raw_fd(), libc::F_SETPIPE_SZ, PIPE_BUFFER) };
}

/// A regular file, hashed from `start` to the end it had when it was opened.
pub(crate) struct InputFile {
    file: File,
    /// The file offset of the input's first byte.
    start: u64,
    /// The file's version at opening.
    stamp: Stamp,
}

impl InputFile {
    /// The input's length in bytes.
    pub(crate) fn len(&self) -> u64 {
        self.stamp.len - self.start
    }

    /// What identified the file's version when it was opened.
    pub(crate) fn stamp(&self) -> &Stamp {
        &self.stamp
    }

    /// Reads `buf.len()` bytes from `offset` of the input. A file that ends
    /// early has shrunk; an I/O error says where it happened.
    pub(crate) fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> Result<(), HashError> {
        self.file
            .read_exact_at(buf, self.start + offset)
            .map_err(|e| self.read_error(e, offset))
    }

    /// Fills every `(buffer, offset)` part from the input, in reads of at
    /// most 256 KiB on the current rayon pool: many reads in flight for a
    /// file on disk, many cores copying for one in the page cache. A GPU's
    /// 32 MiB slot is 128 such tasks, many more than the pool has threads,
    /// so that a thread slowed by another on its core holds up little of
    /// the slot (docs/decisions/0012-staging-tasks-256kib.md).
    pub(crate) fn read_parts_at(&self, parts: Vec<(&mut [u8], u64)>) -> Result<(), HashError> {
        const TASK: usize = 256 << 10;
        parts.into_par_iter().try_for_each(|(buf, offset)| {
            buf.par_chunks_mut(TASK)
                .enumerate()
                .try_for_each(|(k, part)| self.read_exact_at(part, offset + (k * TASK) as u64))
        })
    }

    /// Maps `len` bytes from `offset` of the input, read-only, every page
    /// read in before this returns, so that an error is returned here (a
    /// shrunk file, a failing disk) rather than raised later as SIGBUS.
    ///
    /// The mapping is shared: another process that writes the file changes
    /// these bytes while they are read. That is why mapping is private to
    /// the crate, whose only use of the bytes is to feed them to Keccak: a
    /// concurrent write can make that digest describe no version of the file
    /// (which `check_unchanged` then reports as an error where the size or
    /// modification time moved), but nothing here depends on the bytes for
    /// memory safety. A truncation between this call and the last read of
    /// the window still raises SIGBUS, which the command-line tool turns
    /// into an error message.
    pub(crate) fn map(&self, offset: u64, len: usize) -> Result<Mmap, HashError> {
        let now = self.file.metadata()?.len();
        if now < self.start + offset + len as u64 {
            return Err(self.shrunk(now));
        }
        // SAFETY: a read-only shared mapping of a regular file. Rust's
        // aliasing rules assume the bytes behind `&[u8]` do not change; a
        // concurrent writer breaks that assumption only for the values of
        // bytes that are hashed, never for addresses or lengths, as the
        // function's documentation explains.
        let map = unsafe {
            MmapOptions::new()
                .offset(self.start + offset)
                .len(len)
                .map(&self.file)
        }?;
        // Read in a step at a time: MADV_POPULATE_READ holds the process's
        // mmap lock, and a whole window's populate keeps the CUDA driver's
        // start-up, which maps memory many times, waiting behind it
        // (docs/decisions/0001-windows-mapped-in-steps.md).
        for at in (0..len).step_by(MAPPING_STEP) {
            let step = MAPPING_STEP.min(len - at);
            match map.advise_range(Advice::PopulateRead, at, step) {
                Ok(()) => {}
                // Kernels before 5.14 lack MADV_POPULATE_READ: fault on demand.
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => break,
                // EFAULT: a page could not be read in, because the file is
                // shorter now or because the storage failed.
                Err(e) if e.raw_os_error() == Some(libc::EFAULT) => {
                    let now = self.file.metadata()?.len();
                    if now < self.stamp.len {
                        return Err(self.shrunk(now));
                    }
                    return Err(self.locate_read_error(offset + at as u64, step));
                }
                Err(e) => return Err(self.read_error(e, offset + at as u64)),
            }
        }
        #[cfg(test)]
        if let Some(hook) = &*tests::WINDOW_READ_IN.lock().unwrap() {
            hook(&self.file, offset..offset + len as u64);
        }
        Ok(map)
    }

    /// Asks the kernel to start reading `len` bytes from `offset` of the
    /// input into the page cache, without waiting.
    pub(crate) fn prefetch(&self, offset: u64, len: u64) {
        self.advise(offset, len, libc::POSIX_FADV_WILLNEED);
    }

    fn advise(&self, offset: u64, len: u64, advice: libc::c_int) {
        let (Ok(at), Ok(len)) = (
            libc::off_t::try_from(self.start + offset),
            libc::off_t::try_from(len),
        ) else {
            return;
        };
        // SAFETY: posix_fadvise only reads its arguments; the descriptor is open.
        // A failure only means no hint was given.
        unsafe { libc::posix_fadvise(self.file.as_raw_fd(), at, len, advice) };
    }

    /// An error if the file's size, modification time, change time or inode
    /// is no longer what it was when it was opened: its digest would
    /// describe no version of it.
    pub(crate) fn check_unchanged(&self) -> Result<(), HashError> {
        self.stamp.check_unchanged(&self.file.metadata()?)
    }

    /// Moves the file offset to the end of what was hashed, as a reader of
    /// standard input would leave it.
    pub(crate) fn seek_past(&mut self) -> io::Result<()> {
        self.file.seek(SeekFrom::Start(self.stamp.len)).map(drop)
    }

    /// The error for a mapped window whose pages were lost from `offset` of
    /// the input on while it was hashed (see `crate::sigbus`).
    pub(crate) fn window_failed(&self, offset: u64) -> HashError {
        match self.file.metadata() {
            Ok(meta) if meta.len() < self.stamp.len => self.shrunk(meta.len()),
            // Cut and grown again, or rewritten: a change, not a read error.
            Ok(meta) => match self.stamp.check_unchanged(&meta) {
                Err(changed) => changed,
                Ok(()) => HashError::ReadAt {
                    offset: self.start + offset,
                    source: io::Error::from_raw_os_error(libc::EIO),
                },
            },
            Err(e) => HashError::Io(e),
        }
    }

    /// The error of the first part of `len` bytes from `offset` that cannot
    /// be read, for a window whose pages could not be read in.
    fn locate_read_error(&self, offset: u64, len: usize) -> HashError {
        const STEP: usize = 64 << 10;
        let mut buf = vec![0u8; STEP.min(len)];
        let mut at = 0;
        while at < len {
            let n = STEP.min(len - at);
            if let Err(e) = self.read_exact_at(&mut buf[..n], offset + at as u64) {
                return e;
            }
            at += n;
        }
        // It read this time: still no digest from a window that failed once.
        HashError::ReadAt {
            offset: self.start + offset,
            source: io::Error::from_raw_os_error(libc::EIO),
        }
    }

    fn shrunk(&self, now: u64) -> HashError {
        HashError::Changed(format!(
            "it shrank from {} to {now} bytes while being read",
            self.stamp.len
        ))
    }

    fn read_error(&self, e: io::Error, offset: u64) -> HashError {
        if e.kind() == io::ErrorKind::UnexpectedEof {
            return match self.file.metadata() {
                Ok(meta) => self.shrunk(meta.len()),
                Err(e) => HashError::Io(e),
            };
        }
        HashError::ReadAt {
            offset: self.start + offset,
            source: e,
        }
    }
}

/// What tells one version of a file from another: its size, modification
/// time, change time and inode. A writer can set the modification time back
/// (`touch -r`, `rsync --inplace -t`), but not the change time, which the
/// kernel sets on every write and every change of the times; a file
/// replaced by another under its name has another inode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stamp {
    pub(crate) len: u64,
    pub(crate) modified: Option<SystemTime>,
    /// The change time (`st_ctime`), in nanoseconds since 1970.
    pub(crate) changed_ns: i64,
    pub(crate) inode: u64,
}

impl Stamp {
    pub(crate) fn of(meta: &Metadata) -> Stamp {
        Stamp {
            len: meta.len(),
            modified: meta.modified().ok(),
            changed_ns: meta
                .ctime()
                .saturating_mul(1_000_000_000)
                .saturating_add(meta.ctime_nsec()),
            inode: meta.ino(),
        }
    }

    /// An error if `now`, the file's metadata now, shows another version
    /// than this stamp's.
    pub(crate) fn check_unchanged(&self, now: &Metadata) -> Result<(), HashError> {
        let now = Stamp::of(now);
        if now.len != self.len {
            return Err(HashError::Changed(format!(
                "size {} became {}",
                self.len, now.len
            )));
        }
        if now.modified != self.modified {
            return Err(HashError::Changed("modification time moved".into()));
        }
        if now.inode != self.inode {
            return Err(HashError::Changed("replaced by another file".into()));
        }
        if now.changed_ns != self.changed_ns {
            return Err(HashError::Changed(
                "written to or its times set (its change time moved)".into(),
            ));
        }
        Ok(())
    }
}

/// A worker keeps its read buffer between tasks up to this size; a task
/// that reads more (ParallelHash with a large B) reads into a buffer of
/// its own.
const KEPT_READ_BUFFER: usize = 4 << 20;

/// Runs `f` on `len` bytes of this thread's read buffer (a buffer of its
/// own when longer than [`KEPT_READ_BUFFER`]): for tasks that read their
/// own bytes of an input and hash them while they are in the core's cache.
/// `f` must not wait on a thread pool, where the thread could take up
/// another such task, whose call would find the buffer borrowed.
pub(crate) fn with_read_buffer<R>(len: usize, f: impl FnOnce(&mut [u8]) -> R) -> R {
    thread_local! {
        static BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    if len > KEPT_READ_BUFFER {
        return f(&mut vec![0u8; len]);
    }
    BUFFER.with_borrow_mut(|buffer| {
        if buffer.len() < len {
            buffer.resize(len, 0);
        }
        f(&mut buffer[..len])
    })
}

#[cfg(test)]
mod tests {
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
            Source::Stream(_) => panic!("a regular file with bytes is read by ranges"),
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
    fn empty_and_special_files_are_streams_and_directories_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty");
        std::fs::write(&empty, b"").unwrap();
        assert!(matches!(Source::open(&empty).unwrap(), Source::Stream(_)));
        assert!(matches!(
            Source::open(Path::new("/dev/null")).unwrap(),
            Source::Stream(_)
        ));
        let err = Source::open(dir.path()).err().unwrap();
        assert_eq!(err.raw_os_error(), Some(libc::EISDIR));
        // sysfs files claim 4096 bytes and refuse to be mapped: streams.
        let sys = Path::new("/sys/kernel/mm/transparent_hugepage/enabled");
        if sys.exists() {
            assert!(matches!(Source::open(sys).unwrap(), Source::Stream(_)));
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
}
