//! Process-wide signal set-up for the command-line tool (a library must not
//! touch signal handlers, so this lives here).

/// Restores the default SIGPIPE action, so that `treehash … | head` ends
/// quietly like coreutils, and turns SIGBUS into a one-line error.
///
/// SIGBUS arrives when a mapped input shrinks while it is read: the pages
/// past the new end no longer exist. No digest can be right then, so the
/// handler prints why and exits with code 1 instead of dumping core.
pub fn install() {
    // SAFETY: plain libc calls at start-up, before any other thread exists;
    // the handler only calls async-signal-safe functions (write, _exit).
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigbus as *const () as libc::sighandler_t;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut());
    }
}

extern "C" fn on_sigbus(_signal: libc::c_int) {
    const MESSAGE: &[u8] =
        b"treehash: an input file shrank while it was being hashed (SIGBUS); no digest\n";
    // SAFETY: write(2) and _exit(2) are async-signal-safe.
    unsafe {
        libc::write(2, MESSAGE.as_ptr().cast(), MESSAGE.len());
        libc::_exit(1);
    }
}
