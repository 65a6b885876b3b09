//! Process-wide signal set-up for the command-line tool (a library must not
//! touch signal handlers, so this lives here), and the record of the input
//! being hashed that the SIGBUS handler names.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};

/// The longest name recorded; a longer one is cut (and ends with `...`).
const NAME_CAPACITY: usize = 4096;

/// The name of the input being hashed, for the SIGBUS handler. Its bytes are
/// written before `NAME_LEN` is (release), and read after it (acquire): a
/// handler never sees a half-written name, and reading atomics needs no lock,
/// so it is async-signal-safe.
static NAME: [AtomicU8; NAME_CAPACITY] = [const { AtomicU8::new(0) }; NAME_CAPACITY];
static NAME_LEN: AtomicUsize = AtomicUsize::new(0);
/// A handler is printing its message: any other thread that faults waits
/// for its `_exit`, so that the message is printed once.
static REPORTING: AtomicBool = AtomicBool::new(false);

/// Restores the default SIGPIPE action, so that `treehash … | head` ends
/// quietly like coreutils, and turns SIGBUS into a one-line error.
///
/// SIGBUS arrives when pages of a mapped input cannot be read: the file was
/// truncated while it was hashed (the pages past the new end no longer
/// exist), or the storage under it failed. No digest can be right then. In
/// a window the library is hashing, `treehash::sigbus::recover` turns it
/// into an error for that input; anywhere else the handler names the input,
/// says so, and exits with code 1 instead of dumping core.
pub fn install() {
    // SAFETY: plain libc calls at start-up, before any other thread exists;
    // the handler only reads atomics and calls async-signal-safe functions
    // (write, _exit, and mmap through `sigbus::recover`).
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigbus as *const () as libc::sighandler_t;
        action.sa_flags = libc::SA_SIGINFO;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut());
    }
}

/// Records `name` as the input about to be hashed (until the next call).
pub fn hashing(name: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let bytes = name.as_os_str().as_bytes();
    NAME_LEN.store(0, Ordering::Release);
    let kept = bytes.len().min(NAME_CAPACITY);
    for (slot, &b) in NAME.iter().zip(&bytes[..kept]) {
        slot.store(b, Ordering::Relaxed);
    }
    if kept < bytes.len() {
        for slot in &NAME[kept - 3..kept] {
            slot.store(b'.', Ordering::Relaxed);
        }
    }
    NAME_LEN.store(kept, Ordering::Release);
}

extern "C" fn on_sigbus(
    _signal: libc::c_int,
    info: *mut libc::siginfo_t,
    _context: *mut libc::c_void,
) {
    // SAFETY: the kernel passes a valid siginfo_t with SA_SIGINFO.
    let (code, address) = unsafe { ((*info).si_code, (*info).si_addr() as usize) };
    // A window the library is hashing: it fails that input with an error,
    // and the run goes on.
    // SAFETY: this is the SIGBUS handler (SA_SIGINFO), running on the thread
    // that took the fault; `raised_by_an_access` checked that the kernel
    // raised it for this thread's own access, so `address` is the faulting
    // address; and the handler returns only when `recover` says true.
    if treehash::sigbus::raised_by_an_access(code) && unsafe { treehash::sigbus::recover(address) }
    {
        return;
    }
    if REPORTING.swap(true, Ordering::AcqRel) {
        loop {
            // SAFETY: pause(2) is async-signal-safe; the first handler's
            // _exit ends this thread with the process.
            unsafe { libc::pause() };
        }
    }
    let why: &[u8] = match code {
        #[cfg(target_os = "linux")]
        libc::BUS_MCEERR_AR | libc::BUS_MCEERR_AO => {
            b"a memory hardware error hit the pages of the mapped input (SIGBUS); no digest\n"
        }
        _ => {
            b"the mapped input's pages could not be read (SIGBUS): the file was truncated \
              while it was being hashed, or its storage failed; no digest\n"
        }
    };
    write_stderr(b"treehash: ");
    let len = NAME_LEN.load(Ordering::Acquire);
    if len > 0 {
        let mut chunk = [0u8; 256];
        for start in (0..len).step_by(chunk.len()) {
            let end = (start + chunk.len()).min(len);
            for (out, slot) in chunk.iter_mut().zip(&NAME[start..end]) {
                *out = slot.load(Ordering::Relaxed);
            }
            write_stderr(&chunk[..end - start]);
        }
        write_stderr(b": ");
    }
    write_stderr(why);
    // SAFETY: _exit(2) is async-signal-safe.
    unsafe { libc::_exit(1) }
}

/// write(2) to standard error, from the signal handler.
fn write_stderr(bytes: &[u8]) {
    // SAFETY: write(2) is async-signal-safe; the buffer is valid for its length.
    unsafe {
        libc::write(libc::STDERR_FILENO, bytes.as_ptr().cast(), bytes.len());
    }
}
