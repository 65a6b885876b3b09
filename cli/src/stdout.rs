//! Standard output, with every write checked, as coreutils does: a full disk
//! (`> /dev/full`) or a closed standard output (`>&-`) is an error with one
//! message and exit code 1, never a panic and never a silent success.
//!
//! A closed standard output needs care: before `main`, Rust's runtime opens
//! /dev/null on any of file descriptors 0–2 found closed (so that files
//! opened later cannot take their place), and writes to it then succeed. So
//! whether descriptor 1 was open is asked earlier, by a constructor that the
//! C runtime calls before Rust's own start-up code.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// Descriptor 1 was closed when the process started.
static CLOSED_AT_START: AtomicBool = AtomicBool::new(false);

/// Runs before `main` and before Rust's runtime reopens closed descriptors.
/// (ELF on Linux; elsewhere a closed standard output goes unnoticed, as before.)
// SAFETY: `.init_array` holds plain `extern "C" fn()` pointers that the C
// runtime calls once at start-up; this one only asks fcntl about a descriptor.
#[cfg(target_os = "linux")]
#[used]
#[unsafe(link_section = ".init_array")]
static PROBE_STDOUT: extern "C" fn() = probe_stdout;

#[cfg(target_os = "linux")]
extern "C" fn probe_stdout() {
    // SAFETY: F_GETFD only reads the descriptor's flags; it fails with EBADF
    // exactly when descriptor 1 is not open.
    let closed = unsafe { libc::fcntl(libc::STDOUT_FILENO, libc::F_GETFD) } == -1;
    CLOSED_AT_START.store(closed, Ordering::Relaxed);
}

/// Writes `bytes` to standard output and flushes them, so that an error is
/// seen at the write that caused it.
pub fn write(bytes: &[u8]) -> io::Result<()> {
    if CLOSED_AT_START.load(Ordering::Relaxed) {
        return Err(io::Error::from_raw_os_error(libc::EBADF));
    }
    let mut out = io::stdout().lock();
    out.write_all(bytes)?;
    out.flush()
}
