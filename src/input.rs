//! Opening an input. A regular file (standard input too, when it is one) is
//! read from where its offset stands to its end, by ranges: mapped a window
//! at a time or read with pread, never mapped whole. Everything else (pipes,
//! terminals, character devices, files that report size 0 such as those of
//! /proc) is a sequential input: read in order, once, to its end.
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
/// `.init_array` (ELF) or `__mod_init_func` (Mach-O) first; a program that
/// loads the library later calls it as the library is loaded.
// SAFETY: `.init_array` and `__mod_init_func` hold plain `extern "C" fn()`
// pointers that the C runtime calls once; this one only asks fcntl about a
// descriptor.
#[used]
#[cfg_attr(not(target_vendor = "apple"), unsafe(link_section = ".init_array"))]
#[cfg_attr(
    target_vendor = "apple",
    unsafe(link_section = "__DATA,__mod_init_func,mod_init_funcs")
)]
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
    // /dev/null is character device 1:3 on Linux, 3:2 on macOS.
    #[cfg(not(target_vendor = "apple"))]
    let dev_null = libc::makedev(1, 3);
    // (dev_t is an i32 there, which std widens to u64 with `as` too.)
    #[cfg(target_vendor = "apple")]
    let dev_null = libc::makedev(3, 2) as u64;
    let stdin = io::stdin().as_fd().try_clone_to_owned().map(File::from);
    stdin
        .and_then(|file| file.metadata())
        .is_ok_and(|meta| meta.file_type().is_char_device() && meta.rdev() == dev_null)
}

/// An opened input, ready to be hashed.
pub(crate) enum Source {
    /// A regular file, read by ranges.
    File(InputFile),
    /// A sequential input: bytes read in order until the end, in constant
    /// memory.
    Sequential(File),
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
        // those are sequential inputs, read to their end. A file that will
        // be mapped is asked whether it can be (sysfs refuses); one that
        // will be read whole, which file system it is on: a trial mapping
        // costs system calls and the process's mapping lock, per file of a
        // list.
        let len = meta.len();
        let pseudo = || match usize::try_from(len) {
            Ok(len) if len <= SMALL_FILE_READ => on_a_pseudo_file_system(&file),
            _ => !can_map(&file),
        };
        if !meta.is_file() || len == 0 || pseudo() {
            if meta.file_type().is_fifo() {
                widen_pipe(&file);
            }
            return Ok(Source::Sequential(file));
        }
        // Standard input may have been partly read already (`{ head -c 100
        // >/dev/null; treehash -; } < file`): hash what is left, as coreutils do.
        let start = match start {
            Start::AtZero => 0,
            Start::AtOffset => file.stream_position()?.min(len),
        };
        let stamp = Stamp::of(&meta);
        let input = InputFile { file, start, stamp };
        // The OS kernel reads ahead further for a file it is told is sequential
        // (a file read whole in one call gains nothing from it).
        if input.len() > SMALL_FILE_READ as u64 {
            input.advise(0, input.len(), Hint::Sequential);
        }
        Ok(Source::File(input))
    }

    /// The input's size when known in advance (for the progress bar).
    pub(crate) fn known_len(&self) -> Option<u64> {
        match self {
            Source::File(f) => Some(f.len()),
            Source::Sequential(_) => None,
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
/// contents' (procfs, sysfs and their kind). The magic numbers and
/// `f_type` have libc's types for the target (`c_long` on most Linux
/// targets, `c_uint` on s390x), so they are compared as they are.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn on_a_pseudo_file_system(file: &File) -> bool {
    let pseudo = [
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
    done && pseudo.contains(&unsafe { fs.assume_init() }.f_type)
}

/// Elsewhere (macOS) no file system reports sizes that are not its files'
/// contents: a regular file is read by ranges.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn on_a_pseudo_file_system(_file: &File) -> bool {
    false
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
#[cfg(any(target_os = "linux", target_os = "android"))]
const PIPE_BUFFER: libc::c_int = 1 << 20;

/// Bytes of a mapped window read in, or dropped, by one madvise call (see
/// [`InputFile::map`]): few enough that the mmap lock is never held long
/// (docs/decisions/0001-windows-mapped-in-steps.md).
pub(crate) const MAPPING_STEP: usize = 1 << 20;

/// Enlarges a pipe's buffer where the system allows it (up to
/// /proc/sys/fs/pipe-max-size, 1 MiB by default); a refusal changes nothing.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn widen_pipe(pipe: &File) {
    // SAFETY: F_SETPIPE_SZ takes an int and touches no memory of ours.
    unsafe { libc::fcntl(pipe.as_raw_fd(), libc::F_SETPIPE_SZ, PIPE_BUFFER) };
}

/// Elsewhere a pipe's buffer has no size to ask for (macOS grows it by
/// itself, up to 64 KiB).
#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn widen_pipe(_pipe: &File) {}

/// A hint to the OS kernel about how a range of the input will be read.
#[derive(Clone, Copy)]
enum Hint {
    /// In order, once: read further ahead.
    Sequential,
    /// Soon: start reading it into the page cache.
    WillNeed,
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
        // (docs/decisions/0001-windows-mapped-in-steps.md). Elsewhere
        // (macOS) MADV_WILLNEED only starts the reads: a page that cannot be
        // read in then raises SIGBUS when it is hashed (crate::sigbus).
        #[cfg(target_os = "linux")]
        const READ_IN: Advice = Advice::PopulateRead;
        #[cfg(not(target_os = "linux"))]
        const READ_IN: Advice = Advice::WillNeed;
        for at in (0..len).step_by(MAPPING_STEP) {
            let step = MAPPING_STEP.min(len - at);
            match map.advise_range(READ_IN, at, step) {
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

    /// Asks the OS kernel to start reading `len` bytes from `offset` of the
    /// input into the page cache, without waiting.
    pub(crate) fn prefetch(&self, offset: u64, len: u64) {
        self.advise(offset, len, Hint::WillNeed);
    }

    /// Gives the OS kernel a hint about a range of the input; a failure, or
    /// a system without the call, only means no hint was given.
    fn advise(&self, offset: u64, len: u64, hint: Hint) {
        let (Ok(at), Ok(len)) = (
            libc::off_t::try_from(self.start + offset),
            libc::off_t::try_from(len),
        ) else {
            return;
        };
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            let advice = match hint {
                Hint::Sequential => libc::POSIX_FADV_SEQUENTIAL,
                Hint::WillNeed => libc::POSIX_FADV_WILLNEED,
            };
            // SAFETY: posix_fadvise only reads its arguments; the descriptor is open.
            unsafe { libc::posix_fadvise(self.file.as_raw_fd(), at, len, advice) };
        }
        // macOS has no posix_fadvise: F_RDADVISE reads a range ahead (its
        // count is an int, so a longer range is hinted in part); read-ahead
        // of a sequential file is on by default.
        #[cfg(target_vendor = "apple")]
        if let Hint::WillNeed = hint {
            let advice = libc::radvisory {
                ra_offset: at,
                ra_count: libc::c_int::try_from(len).unwrap_or(libc::c_int::MAX),
            };
            // SAFETY: F_RDADVISE reads one radvisory, which `advice` is; the
            // descriptor is open.
            unsafe { libc::fcntl(self.file.as_raw_fd(), libc::F_RDADVISE, &advice) };
        }
        #[cfg(not(any(target_os = "linux", target_os = "android", target_vendor = "apple")))]
        let _ = (at, len, hint);
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
/// OS kernel sets on every write and every change of the times; a file
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
mod tests;
