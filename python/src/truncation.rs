//! `handle_truncation()`: an opt-in SIGBUS handler, so that a file cut short
//! while `file_digest` hashes a mapped window of it raises an exception
//! instead of ending the process. The package installs nothing
//! unless asked: a process's signal handlers are its program's to choose.

use std::sync::Mutex;
use std::sync::atomic::{AtomicPtr, Ordering};

use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;

/// The SIGBUS action in place before ours, for the handler to hand on
/// whatever it does not recover: published (release) before our handler is
/// installed and never freed, so that a handler that loaded it (acquire)
/// reads a whole action on any thread.
static PREVIOUS: AtomicPtr<libc::sigaction> = AtomicPtr::new(std::ptr::null_mut());
/// Whether our handler is installed; also keeps two installs apart.
static INSTALLED: Mutex<bool> = Mutex::new(false);

/// Turns a file truncated while it is hashed into an exception instead of
/// the end of the process: installs a SIGBUS handler (once; later calls do
/// nothing).
///
/// :func:`file_digest` reads a file through memory mappings. When the file
/// is cut short while a window of it is being hashed, the kernel takes the
/// pages past the new end away, and the next read of one raises SIGBUS,
/// whose default action ends the process (as with any mapped file). With
/// this handler, a fault in a window treehash is hashing is recovered: the
/// rest of that window reads as zeros, and the call raises ``RuntimeError`` ("the file changed while it was being
/// hashed", naming the file), or ``OSError`` (EIO) where the file kept its
/// size (its storage failed), never a digest. Any other SIGBUS goes to the
/// handler that was in place when this was called: the default action
/// (the process ends of SIGBUS), a function (called with the signal's
/// arguments, with or without ``siginfo`` as it was installed), or
/// "ignore", which the kernel does not honour for a fault on an access (the
/// process ends of SIGBUS) but does for a signal sent with kill. Only
/// windows treehash maps itself are recovered: a buffer given to
/// :meth:`Hash.update` (an ``mmap`` of a file, say) is the caller's.
///
/// Install it after anything else that sets a SIGBUS handler
/// (``faulthandler.enable()``, which pytest calls): a handler set later
/// replaces this one, and faulthandler's re-raises the signal, which no
/// longer counts as a fault. Raises ``OSError`` if sigaction(2) fails.
#[pyfunction]
pub fn handle_truncation() -> PyResult<()> {
    let mut installed = INSTALLED
        .lock()
        .map_err(|_| PyOSError::new_err("internal error: the SIGBUS install lock is poisoned"))?;
    if *installed {
        return Ok(());
    }
    // SAFETY: sigaction is plain data, for which all zeros is a value.
    let mut previous: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: with a null new action, sigaction(2) only writes the current
    // one into `previous`, a sigaction it may write.
    if unsafe { libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut previous) } != 0 {
        return Err(std::io::Error::last_os_error().into());
    }
    // Published before the handler that reads it is installed, and leaked:
    // a handler may be reading it on another thread at any time after.
    // (A failed install below leaves it leaked and unused; the next call
    // publishes a fresh one.)
    PREVIOUS.store(Box::into_raw(Box::new(previous)), Ordering::Release);
    // SAFETY: a zeroed sigaction is a valid "no flags, empty mask" action;
    // `on_sigbus` has the signature SA_SIGINFO calls for and is
    // async-signal-safe; sigaction(2) copies the action.
    let status = unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigbus as *const () as libc::sighandler_t;
        // SA_ONSTACK: where the faulting thread has an alternate signal
        // stack (Python's faulthandler sets one), a handler handed the
        // signal runs on it as it would have without ours.
        action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut())
    };
    if status != 0 {
        return Err(std::io::Error::last_os_error().into());
    }
    *installed = true;
    Ok(())
}

/// Whether the kernel raised this SIGBUS for the receiving thread's own
/// access, so that it cannot be ignored (Linux then sets the default
/// action and ends the process): the faults `recover` is for, and an
/// unaligned access.
fn forced(si_code: libc::c_int) -> bool {
    treehash::sigbus::raised_by_an_access(si_code) || si_code == libc::BUS_ADRALN
}

/// Recovers a fault in a window the library is hashing, else does what the
/// action in place before ours would have done. Async-signal-safe: atomics,
/// mmap(2) (in `recover`), sigaction(2), raise(3) and the previous handler.
/// errno is not saved: `recover`, the only call here that may set it without
/// ending the process or handing on, runs only for a fault on a load in the
/// hashing code, where no errno is in flight.
extern "C" fn on_sigbus(
    signal: libc::c_int,
    info: *mut libc::siginfo_t,
    context: *mut libc::c_void,
) {
    // SAFETY: the kernel passes a valid siginfo_t to an SA_SIGINFO handler.
    let (code, address) = unsafe { ((*info).si_code, (*info).si_addr() as usize) };
    // SAFETY: this is the SIGBUS handler, installed with SA_SIGINFO, on the
    // thread that took the signal; `raised_by_an_access` checked that the
    // kernel raised it for this thread's own access, so `address` is the
    // faulting address; and the handler returns after a recovery only when
    // `recover` says true.
    if treehash::sigbus::raised_by_an_access(code) && unsafe { treehash::sigbus::recover(address) }
    {
        return;
    }
    // SAFETY: PREVIOUS is published before this handler is installed and
    // never freed or written through, so the pointer is null or a whole,
    // live action.
    let Some(previous) = (unsafe { PREVIOUS.load(Ordering::Acquire).as_ref() }) else {
        return die(signal);
    };
    let handler = match previous.sa_sigaction {
        libc::SIG_DFL => return die(signal),
        libc::SIG_IGN if forced(code) => return die(signal),
        libc::SIG_IGN => return,
        handler => handler,
    };
    // The signals it was installed to block are blocked while it runs, as
    // the kernel would have (until this handler returns, when the kernel
    // restores the mask of the code interrupted). SIGBUS stays blocked even
    // where it was installed with SA_NODEFER: a signal it raises arrives as
    // this handler returns, to the action in place then.
    // SAFETY: pthread_sigmask(3) is async-signal-safe, and reads a valid
    // set.
    unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &previous.sa_mask, std::ptr::null_mut()) };
    if previous.sa_flags & libc::SA_SIGINFO != 0 {
        // SAFETY: an action with SA_SIGINFO holds a handler of this
        // signature, called with the arguments the kernel gave ours.
        let handler: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
            unsafe { std::mem::transmute(handler) };
        handler(signal, info, context);
    } else {
        // SAFETY: an action without SA_SIGINFO holds a handler that takes
        // the signal number alone.
        let handler: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(handler) };
        handler(signal);
    }
}

/// Ends the process as the default action would: the action set back to
/// the default, and the signal raised again. It is blocked while this
/// handler runs, so it arrives as the handler returns; for a fault, before
/// the faulting access runs again.
fn die(signal: libc::c_int) {
    // SAFETY: sigaction(2) and raise(3) are async-signal-safe; the action
    // is a valid zeroed sigaction with SIG_DFL (0) as its handler.
    unsafe {
        let mut default: libc::sigaction = std::mem::zeroed();
        default.sa_sigaction = libc::SIG_DFL;
        libc::sigemptyset(&mut default.sa_mask);
        libc::sigaction(signal, &default, std::ptr::null_mut());
        libc::raise(signal);
    }
}
