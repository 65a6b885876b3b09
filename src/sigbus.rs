//! Surviving SIGBUS on a mapped window. A window is read in before it is
//! hashed, but if the file is truncated (or its storage fails) while the
//! window is being hashed, the kernel takes the pages away and the next read
//! of one raises SIGBUS. A program that installs a SIGBUS handler can call
//! [`recover`] from it: if the faulting address lies in a window this crate
//! is hashing, the rest of the window is replaced by zero pages, the window
//! is marked as failed, and the handler returns, so the read goes on. The
//! input path then gives that input an error, never a digest, and hashing
//! goes on with the next input. The library installs no handler itself.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::input::{page_size, page_span};

/// Windows registered at once at most (three are mapped per input, and the
/// library hashes one input per thread that calls it).
const SLOTS: usize = 32;
/// `failed_at` of a window that has not failed.
const NOT_FAILED: usize = usize::MAX;

struct Slot {
    in_use: AtomicBool,
    start: AtomicUsize,
    end: AtomicUsize,
    /// The first address that could not be read, or `NOT_FAILED`.
    failed_at: AtomicUsize,
}

static WINDOWS: [Slot; SLOTS] = [const {
    Slot {
        in_use: AtomicBool::new(false),
        start: AtomicUsize::new(0),
        end: AtomicUsize::new(0),
        failed_at: AtomicUsize::new(NOT_FAILED),
    }
}; SLOTS];

/// For a SIGBUS handler (installed with `SA_SIGINFO`), with the signal's
/// `si_addr`: true if the fault was in a window being hashed, which is now
/// failed and readable as zeros from the faulting page on, so that the
/// handler may return; false if it was not (the handler should then end the
/// process as it would have). Async-signal-safe: atomics and one mmap(2).
pub fn recover(fault_address: usize) -> bool {
    for slot in &WINDOWS {
        if !slot.in_use.load(Ordering::Acquire) {
            continue;
        }
        let (start, end) = (
            slot.start.load(Ordering::Acquire),
            slot.end.load(Ordering::Acquire),
        );
        if !(start..end).contains(&fault_address) {
            continue;
        }
        let page = page_size();
        let from = fault_address - fault_address % page;
        // SAFETY: [from, end) lies inside a read-only mapping this crate
        // made and still holds (registered until it is unmapped); replacing
        // those pages with private zero pages changes only the bytes being
        // hashed, which the failed mark keeps from ever becoming a digest.
        let mapped = unsafe {
            libc::mmap(
                from as *mut libc::c_void,
                end - from,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        if mapped == libc::MAP_FAILED {
            return false;
        }
        slot.failed_at.fetch_min(fault_address, Ordering::AcqRel);
        return true;
    }
    false
}

/// A window registered for [`recover`] while it is hashed; unregistered
/// when dropped, which must happen before the window is unmapped.
pub(crate) struct Guard {
    slot: &'static Slot,
    start: usize,
}

/// Registers the mapped bytes `window` (page-aligned at its start, as a
/// mapping is); `None` when every slot is taken (then a fault in it stays
/// fatal, as it was without recovery).
pub(crate) fn guard(window: &[u8]) -> Option<Guard> {
    let Range { start, end } = page_span(window);
    let slot = WINDOWS.iter().find(|s| {
        s.in_use
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    })?;
    slot.failed_at.store(NOT_FAILED, Ordering::Release);
    slot.start.store(start, Ordering::Release);
    slot.end.store(end, Ordering::Release);
    Some(Guard {
        slot,
        start: window.as_ptr() as usize,
    })
}

impl Guard {
    /// The offset in the window of the first byte that could not be read,
    /// if a fault was recovered in it.
    pub(crate) fn failed_at(&self) -> Option<usize> {
        match self.slot.failed_at.load(Ordering::Acquire) {
            NOT_FAILED => None,
            address => Some(address.saturating_sub(self.start)),
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.slot.start.store(0, Ordering::Release);
        self.slot.end.store(0, Ordering::Release);
        self.slot.in_use.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_registered_windows_are_recovered() {
        assert!(!recover(0x1000));
        let bytes = vec![0u8; 10];
        let guard = guard(&bytes).expect("a free slot");
        assert_eq!(guard.failed_at(), None);
        drop(guard);
        assert!(!recover(bytes.as_ptr() as usize));
    }
}
