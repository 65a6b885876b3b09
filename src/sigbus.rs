//! Surviving SIGBUS on a mapped window. A window is read in before it is
//! hashed, but if the file is truncated (or its storage fails) while the
//! window is being hashed, the kernel takes the pages away and the next read
//! of one raises SIGBUS. A program that installs a SIGBUS handler can call
//! [`recover`] from it: if the faulting address lies in a window this crate
//! is hashing, the rest of the window is replaced by zero pages, the window
//! is marked as failed, and the handler returns, so the read goes on. The
//! input path then gives that input an error, never a digest, and hashing
//! goes on with the next input. The library installs no handler itself.
//!
//! A window's slot is written only by the thread that registered it and read
//! by handlers on any thread, so its address range is published under a
//! sequence number (a seqlock): a handler that meets a slot being filled or
//! emptied by another thread skips it rather than read half of an old range
//! and half of a new one, which could name memory that no window holds.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering, fence};

use crate::input::{page_size, page_span};

/// Windows registered at once at most (three are mapped per input, and the
/// library hashes one input per thread that calls it).
const SLOTS: usize = 32;
/// `failed_at` of a window that has not failed.
const NOT_FAILED: usize = usize::MAX;

struct Slot {
    /// Taken by one registering thread, the only one that writes the rest.
    in_use: AtomicBool,
    /// Odd while `start` and `end` are being written, even when they are
    /// whole; bumped by every write, so that a reader can tell it read one
    /// version of both.
    version: AtomicUsize,
    start: AtomicUsize,
    end: AtomicUsize,
    /// The first address that could not be read, or `NOT_FAILED`.
    failed_at: AtomicUsize,
}

impl Slot {
    /// Writes the range (empty to unregister) under the seqlock.
    fn publish(&self, start: usize, end: usize) {
        let version = self.version.load(Ordering::Relaxed);
        self.version.store(version + 1, Ordering::Relaxed);
        fence(Ordering::Release);
        self.start.store(start, Ordering::Relaxed);
        self.end.store(end, Ordering::Relaxed);
        self.version.store(version + 2, Ordering::Release);
    }

    /// The registered range, if one whole version of it was read.
    fn range(&self) -> Option<Range<usize>> {
        let before = self.version.load(Ordering::Acquire);
        let (start, end) = (
            self.start.load(Ordering::Relaxed),
            self.end.load(Ordering::Relaxed),
        );
        fence(Ordering::Acquire);
        let after = self.version.load(Ordering::Relaxed);
        (before.is_multiple_of(2) && before == after && start < end).then_some(start..end)
    }
}

static WINDOWS: [Slot; SLOTS] = [const {
    Slot {
        in_use: AtomicBool::new(false),
        version: AtomicUsize::new(0),
        start: AtomicUsize::new(0),
        end: AtomicUsize::new(0),
        failed_at: AtomicUsize::new(NOT_FAILED),
    }
}; SLOTS];

/// Whether a SIGBUS with this `si_code` was raised by the kernel for the
/// receiving thread's own memory access (a page that could not be read in,
/// or memory that failed as it was read): the only faults [`recover`] may
/// be called for. A signal sent with kill(2), raise(3) or sigqueue(3) has a
/// code of 0 or less and no address; `BUS_MCEERR_AO` reports memory that
/// failed without being read, possibly to another thread. macOS has no
/// machine-check codes: there a page of a mapped file that cannot be read
/// in (the file truncated under the window) raises SIGBUS with
/// `BUS_ADRERR` or `BUS_OBJERR`, which `recover` handles as on Linux (no
/// Mac runs this crate's tests: see docs/PLATFORMS.md).
pub fn raised_by_an_access(si_code: libc::c_int) -> bool {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let machine_check = si_code == libc::BUS_MCEERR_AR;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let machine_check = false;
    matches!(si_code, libc::BUS_ADRERR | libc::BUS_OBJERR) || machine_check
}

/// For a SIGBUS handler: true if the fault was in a window being hashed,
/// which is now failed and readable as zeros from the faulting page on, so
/// that the handler may return; false if it was not (the handler should
/// then end the process as it would have). Async-signal-safe: atomics and
/// one mmap(2).
///
/// # Safety
///
/// Call it only from a SIGBUS handler installed with `SA_SIGINFO`, on the
/// thread that received the signal, for a fault the kernel raised on that
/// thread's own access ([`raised_by_an_access`] of the signal's `si_code`),
/// with `fault_address` the signal's `si_addr`, and return from the handler
/// only when it returns true.
///
/// It maps zero pages over part of a window with `MAP_FIXED`, and nothing
/// keeps the window mapped meanwhile but the faulting read itself: the
/// crate unregisters and unmaps a window only after every read of it has
/// returned, and the read that faulted waits in the handler. With any other
/// address, the window found could be unregistered and unmapped, and its
/// addresses given to another mapping, between the check and the mmap,
/// which would then overwrite that memory; and bytes of a window that no
/// read faulted on would be changed under the crate's readers for no reason.
pub unsafe fn recover(fault_address: usize) -> bool {
    for slot in &WINDOWS {
        let Some(window) = slot.range() else {
            continue;
        };
        if !window.contains(&fault_address) {
            continue;
        }
        let page = page_size();
        let from = fault_address - fault_address % page;
        // SAFETY: [from, window.end) lies inside a read-only mapping this
        // crate made, which stays mapped until the faulting read returns
        // (the caller's contract); replacing those pages with private zero
        // pages changes only the bytes being hashed, which the failed mark
        // keeps from ever becoming a digest.
        let mapped = unsafe {
            libc::mmap(
                from as *mut libc::c_void,
                window.end - from,
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
    slot.publish(start, end);
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
        self.slot.publish(0, 0);
        self.slot.in_use.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_registered_windows_are_recovered() {
        // SAFETY (both calls): not from a handler, but no window holds these
        // addresses (mappings never start below the first 64 KiB, and
        // `bytes` is no longer registered), so nothing is mapped over.
        assert!(!unsafe { recover(0x1000) });
        let bytes = vec![0u8; 10];
        let guard = guard(&bytes).expect("a free slot");
        assert_eq!(guard.failed_at(), None);
        drop(guard);
        assert!(!unsafe { recover(bytes.as_ptr() as usize) });
    }

    #[test]
    fn a_range_is_read_only_when_whole() {
        let slot = Slot {
            in_use: AtomicBool::new(true),
            version: AtomicUsize::new(0),
            start: AtomicUsize::new(0),
            end: AtomicUsize::new(0),
            failed_at: AtomicUsize::new(NOT_FAILED),
        };
        assert_eq!(slot.range(), None);
        slot.publish(0x10000, 0x30000);
        assert_eq!(slot.range(), Some(0x10000..0x30000));
        // A writer in the middle of a change: the range is not read.
        slot.version.fetch_add(1, Ordering::Relaxed);
        assert_eq!(slot.range(), None);
        slot.version.fetch_add(1, Ordering::Relaxed);
        slot.publish(0, 0);
        assert_eq!(slot.range(), None);
    }

    #[test]
    fn only_the_kernels_faults_on_an_access_are_recovered() {
        assert!(raised_by_an_access(libc::BUS_ADRERR));
        assert!(raised_by_an_access(libc::BUS_OBJERR));
        // Sent signals: SI_USER is 0 on Linux; libc names no codes for
        // macOS, whose SI_USER and SI_QUEUE are 0x10001 and 0x10002.
        #[cfg(any(target_os = "linux", target_os = "android"))]
        let sent = [libc::SI_USER, libc::SI_QUEUE, libc::SI_TKILL];
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        let sent = [0, 0x10001, 0x10002];
        for sent in sent {
            assert!(!raised_by_an_access(sent));
        }
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            assert!(raised_by_an_access(libc::BUS_MCEERR_AR));
            assert!(!raised_by_an_access(libc::BUS_MCEERR_AO));
        }
    }
}
