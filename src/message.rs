//! The one input path: the message M = P ‖ F cut into pieces that every
//! backend absorbs in order. Every piece starts on a block boundary of M, and
//! every piece but the last is a whole number of blocks, so a backend never
//! sees half a block.
//!
//! A file is never mapped whole: its pieces are mapped one window at a time
//! on helper threads, read in ahead of the backend and unmapped behind it,
//! so that memory stays bounded and the disk stays busy. A sequential input
//! (a pipe, a reader) is read on a helper thread into one buffer while the
//! backend absorbs the other.

use std::io::{self, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, sync_channel};

use crate::error::HashError;
use crate::input::{InputFile, MAPPING_STEP, SMALL_FILE_READ};
use crate::params::TreeParams;
use crate::progress::Progress;
use crate::sigbus;
use crate::threads;

/// The largest piece any backend is handed, and so the largest mapped
/// window (how many are mapped at once: `MAPPED_AT_ONCE`); a sequential
/// input holds two pieces.
pub(crate) const MAX_PIECE: usize = 128 << 20;
/// How far ahead of the backend the OS kernel is asked to read a file, so that
/// a disk keeps many reads in flight (a file in the page cache costs only
/// the asking). Asked in steps of `PREFETCH_STEP`. Shorter distances leave
/// a cold file's disk idle part of the time
/// (docs/decisions/0002-read-ahead-1gib.md).
const PREFETCH_AHEAD: u64 = 1 << 30;
/// Bytes of windows read in ahead of the backend: one mapper thread per
/// window (`MAX_MAPPERS` at most, one at least), each holding the window it
/// read in until the backend takes it.
const MAPPED_AHEAD: usize = 256 << 20;
/// Bytes of a file mapped at once, at most (issue 8's bound on peak RSS):
/// the windows read ahead, the one being hashed and the one each of the
/// `UNMAPPERS` threads is unmapping. So mappers + 3 windows: seven of up to
/// 64 MiB (448 MiB), six of up to 85 MiB (510 MiB), and of `MAX_PIECE` (one
/// thread's pieces) one read ahead, four in all (512 MiB).
const MAPPED_AT_ONCE: usize = 512 << 20;
const MAX_MAPPERS: usize = 4;
/// Windows mapped beside those read ahead: the one hashed, the unmappers'.
const WINDOWS_NOT_AHEAD: usize = 1 + UNMAPPERS;
/// Helper threads that unmap the windows hashed, taking turns.
const UNMAPPERS: usize = 2;
const PREFETCH_STEP: u64 = 8 << 20;
/// A sequential input's first bytes, up to about this many, are read on the
/// calling thread: one that ends within them is hashed without a helper
/// thread.
const SMALL_SEQUENTIAL_READ: usize = 64 << 10;

/// A piece length near `target` bytes (at most [`MAX_PIECE`], whatever the
/// caller asks) that is a whole number of blocks and longer than any prefix
/// (so a sequential input's first piece holds the whole prefix).
pub(crate) fn piece_len(block_size: usize, target: usize) -> usize {
    // Whole blocks, rounded down below the largest piece (B ≤ 16 MiB).
    let most = MAX_PIECE - MAX_PIECE % block_size;
    target
        .min(most)
        .max(block_size)
        .max(crate::params::TreeParams::MAX_PREFIX_LEN + 1)
        .next_multiple_of(block_size)
}

/// How a message is cut: its block size (pieces are whole blocks) and the
/// prefix it starts with (LI's P; none for the standard functions).
pub(crate) trait Framing: Sync {
    fn block_size(&self) -> usize;
    fn prefix(&self) -> &[u8];
}

impl Framing for TreeParams {
    fn block_size(&self) -> usize {
        TreeParams::block_size(self)
    }
    fn prefix(&self) -> &[u8] {
        TreeParams::prefix(self)
    }
}

/// A message of blocks of `.0` bytes with no prefix.
pub(crate) struct Blocks(pub(crate) usize);

impl Framing for Blocks {
    fn block_size(&self) -> usize {
        self.0
    }
    fn prefix(&self) -> &[u8] {
        &[]
    }
}

/// One input, as the input path reads it: bytes in memory, a regular file
/// read by ranges, or a sequential input (a pipe, a reader), read in order
/// to its end.
pub(crate) enum Input<'i> {
    Bytes(&'i [u8]),
    File(&'i InputFile),
    Sequential(&'i mut (dyn Read + Send)),
}

impl Input<'_> {
    pub(crate) fn known_len(&self) -> Option<u64> {
        match self {
            Input::Bytes(b) => Some(b.len() as u64),
            Input::File(f) => Some(f.len()),
            Input::Sequential(_) => None,
        }
    }

    /// True when the input can be hashed again from its start.
    pub(crate) fn can_reread(&self) -> bool {
        !matches!(self, Input::Sequential(_))
    }
}

/// A piece of M.
#[derive(Clone, Copy)]
pub(crate) enum Piece<'a> {
    /// Bytes in ordinary memory: the caller's slice, or a copied head.
    Memory(&'a [u8]),
    /// Bytes of a read-only mapping of the input file, every page read in:
    /// `bytes` are the file's from `offset`. The mapping covers whole pages
    /// around them (it can be pinned). A backend that copies the bytes
    /// elsewhere may read them from the file instead: the OS kernel copies from
    /// the page cache faster than a copy through the mapping's small pages
    /// (docs/decisions/0011-gpu-staging-ring.md).
    Mapped {
        bytes: &'a [u8],
        input: &'a InputFile,
        offset: u64,
    },
    /// `len` bytes of the input file from `offset`, not read yet: the
    /// backend reads them where it wants them.
    Unread {
        input: &'a InputFile,
        offset: u64,
        len: usize,
    },
}

impl Piece<'_> {
    /// Its length in bytes.
    pub(crate) fn len(&self) -> usize {
        match *self {
            Piece::Memory(bytes) | Piece::Mapped { bytes, .. } => bytes.len(),
            Piece::Unread { len, .. } => len,
        }
    }
}

/// How a backend wants a file's bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    /// Mapped pieces (the CPU reads them in place).
    Map,
    /// Unread pieces (the GPU reads them into its pinned buffers).
    Read,
}

/// The head of M when there is a prefix: every block that holds a prefix
/// byte, completed from the file's first bytes (`read` fills them).
/// Returns the head and how many file bytes it holds.
fn head<E>(
    params: &dyn Framing,
    file_len: u64,
    read: impl FnOnce(&mut [u8]) -> Result<(), E>,
) -> Result<(Vec<u8>, usize), E> {
    let (prefix, block_size) = (params.prefix(), params.block_size());
    let head_len = prefix.len().next_multiple_of(block_size);
    let from_file = (head_len - prefix.len()).min(file_len as usize);
    let mut head = vec![0u8; prefix.len() + from_file];
    head[..prefix.len()].copy_from_slice(prefix);
    read(&mut head[prefix.len()..])?;
    Ok((head, from_file))
}

/// Calls `absorb` with consecutive pieces of M = P ‖ `file`, each
/// `piece_len` bytes (a multiple of B) except perhaps the first and the last.
/// Only the blocks that hold prefix bytes are copied; the rest are borrowed.
/// `progress` is told the file bytes of each piece once it is absorbed.
pub(crate) fn for_each_piece_of_slice<E>(
    params: &dyn Framing,
    file: &[u8],
    piece_len: usize,
    progress: &dyn Progress,
    mut absorb: impl FnMut(Piece<'_>) -> Result<(), E>,
) -> Result<(), E> {
    debug_assert!(piece_len.is_multiple_of(params.block_size()));
    let mut rest = file;
    if !params.prefix().is_empty() {
        let (head, from_file) = head(params, file.len() as u64, |dst| {
            dst.copy_from_slice(&file[..dst.len()]);
            Ok(())
        })?;
        absorb(Piece::Memory(&head))?;
        progress.advance(from_file as u64);
        rest = &file[from_file..];
    }
    for piece in rest.chunks(piece_len) {
        absorb(Piece::Memory(piece))?;
        progress.advance(piece.len() as u64);
    }
    Ok(())
}

/// [`for_each_piece_of_slice`] for an input file, read as `access` asks.
/// With [`Access::Map`] pieces are at most [`MAX_PIECE`] bytes, and while
/// `unmapped` is set the pieces not yet mapped come unread instead (the
/// engines that own leaves then read the file themselves).
pub(crate) fn for_each_piece_of_file(
    params: &dyn Framing,
    input: &InputFile,
    piece_len: usize,
    access: Access,
    unmapped: &AtomicBool,
    progress: &dyn Progress,
    mut absorb: impl FnMut(Piece<'_>) -> Result<(), HashError>,
) -> Result<(), HashError> {
    let block_size = params.block_size();
    let piece_len = match access {
        Access::Map => piece_len.min((MAX_PIECE / block_size).max(1) * block_size),
        Access::Read => piece_len,
    };
    let file_len = input.len();
    let mut offset = 0u64;
    if !params.prefix().is_empty() {
        let (head, from_file) = head(params, file_len, |dst| input.read_exact_at(dst, 0))?;
        absorb(Piece::Memory(&head))?;
        progress.advance(from_file as u64);
        offset = from_file as u64;
    }
    if file_len - offset <= piece_len as u64 {
        // One piece (or none): helper threads would cost more than they
        // save, and a dataset of many small files pays for them per file.
        let len = (file_len - offset) as usize;
        if len == 0 {
            return Ok(());
        }
        return match access {
            Access::Read => {
                absorb(Piece::Unread { input, offset, len })?;
                progress.advance(len as u64);
                Ok(())
            }
            // A small file is read: a mapping would cost more in system
            // calls, page faults and the unmapping than copying its bytes.
            Access::Map if len <= SMALL_FILE_READ && !unmapped.load(Ordering::Relaxed) => {
                let mut bytes = vec![0u8; len];
                input.read_exact_at(&mut bytes, offset)?;
                absorb(Piece::Memory(&bytes))?;
                progress.advance(len as u64);
                Ok(())
            }
            // Mapped here unless the engines read the file themselves.
            Access::Map => {
                let (window, mut at) = (Window::Unread(offset, len), offset);
                // The window, if mapped, is unmapped as it drops.
                absorb_window(input, window, &mut at, unmapped, progress, &mut absorb)?;
                Ok(())
            }
        };
    }
    let ranges = (offset..file_len)
        .step_by(piece_len)
        .map(move |at| (at, (file_len - at).min(piece_len as u64) as usize));
    std::thread::scope(|s| {
        let reached = prefetcher(s, input);
        match access {
            Access::Read => {
                for (offset, len) in ranges {
                    let _ = reached.send(offset);
                    absorb(Piece::Unread { input, offset, len })?;
                    progress.advance(len as u64);
                }
                Ok(())
            }
            Access::Map => {
                // Several windows are read in (each on its own helper
                // thread) while the backend hashes the one before them, and
                // the one before that is unmapped on another thread: mapping
                // and reading in a page-cached window takes long enough that
                // one thread doing it alone would set the hashing's pace
                // (docs/decisions/0001-windows-mapped-in-steps.md).
                let mappers = (MAPPED_AHEAD / piece_len)
                    .min((MAPPED_AT_ONCE / piece_len).saturating_sub(WINDOWS_NOT_AHEAD))
                    .clamp(1, MAX_MAPPERS);
                let mut mapped = Vec::with_capacity(mappers);
                for first in 0..mappers {
                    let (mapped_tx, mapped_rx) = sync_channel(0);
                    mapped.push(mapped_rx);
                    let reached = reached.clone();
                    let ranges = ranges.clone().skip(first).step_by(mappers);
                    threads::spawn_scoped(s, move || {
                        for (offset, len) in ranges {
                            let _ = reached.send(offset);
                            let window = if unmapped.load(Ordering::Relaxed) {
                                Ok(Window::Unread(offset, len))
                            } else {
                                input.map(offset, len).map(Window::Mapped)
                            };
                            let failed = window.is_err();
                            if mapped_tx.send(window).is_err() || failed {
                                break;
                            }
                        }
                    })?;
                }
                drop(reached);
                // Windows hashed are unmapped on helper threads too, each
                // taking the next: unmapping interrupts every thread that
                // read the window to flush its TLB, and one unmapper alone
                // falls behind many threads hashing a fast function
                // (docs/decisions/0001-windows-mapped-in-steps.md).
                let mut unmappers = Vec::with_capacity(UNMAPPERS);
                for _ in 0..UNMAPPERS {
                    let (unmap, unmapped_rx) = sync_channel::<memmap2::Mmap>(0);
                    threads::spawn_scoped(s, move || {
                        unmapped_rx.into_iter().for_each(unmap_in_steps)
                    })?;
                    unmappers.push(unmap);
                }
                let mut at = offset;
                // Window k comes from mapper k mod n, in order.
                for k in 0.. {
                    let Ok(window) = mapped[k % mappers].recv() else {
                        break;
                    };
                    if let Some(window) =
                        absorb_window(input, window?, &mut at, unmapped, progress, &mut absorb)?
                    {
                        let _ = unmappers[k % UNMAPPERS].send(window);
                    }
                }
                Ok(())
            }
        }
    })
}

/// Absorbs one window of the file that starts at `*at` and moves `*at` past
/// it; returns a mapped window for the caller to unmap.
fn absorb_window(
    input: &InputFile,
    window: Window,
    at: &mut u64,
    unmapped: &AtomicBool,
    progress: &dyn Progress,
    absorb: &mut impl FnMut(Piece<'_>) -> Result<(), HashError>,
) -> Result<Option<memmap2::Mmap>, HashError> {
    let window = match window {
        Window::Mapped(window) => window,
        // Left unread for GPUs that owned every leaf, but the CPU has leaves
        // again: mapped here, late, for the CPU reads a mapping far faster.
        Window::Unread(offset, len) if !unmapped.load(Ordering::Relaxed) => {
            input.map(offset, len)?
        }
        Window::Unread(offset, len) => {
            absorb(Piece::Unread { input, offset, len })?;
            progress.advance(len as u64);
            *at += len as u64;
            return Ok(None);
        }
    };
    // A fault in the window while it is hashed (the file cut short under
    // it) is survived where the program lets `sigbus::recover` run, and
    // ends in an error here.
    let guard = sigbus::guard(&window);
    absorb(Piece::Mapped {
        bytes: &window,
        input,
        offset: *at,
    })?;
    if let Some(failed) = guard.and_then(|g| g.failed_at()) {
        return Err(input.window_failed(*at + failed as u64));
    }
    progress.advance(window.len() as u64);
    *at += window.len() as u64;
    Ok(Some(window))
}

/// Unmaps a window a step at a time: its pages are dropped first with
/// MADV_DONTNEED, which holds the mmap lock only shared and briefly, where
/// one munmap of the whole window holds it exclusively for about a
/// millisecond (see `InputFile::map` for who waits on that lock).
fn unmap_in_steps(window: memmap2::Mmap) {
    for at in (0..window.len()).step_by(MAPPING_STEP) {
        // SAFETY: the window is never read again; had it been, a shared
        // read-only file mapping whose pages were dropped reads the file's
        // bytes again from the page cache, so no read could see freed memory.
        let _ = unsafe {
            window.unchecked_advise_range(
                memmap2::UncheckedAdvice::DontNeed,
                at,
                MAPPING_STEP.min(window.len() - at),
            )
        };
    }
    drop(window);
}

/// A window of the file, as a mapping thread hands it on.
enum Window {
    Mapped(memmap2::Mmap),
    /// `len` bytes from an offset, left unread.
    Unread(u64, usize),
}

/// Runs `work` while a helper thread asks the OS kernel to read the start of
/// `input` (up to [`PREFETCH_AHEAD`] bytes), so that a disk is busy while
/// `work` (starting the GPUs, a fraction of a second) keeps the hashing from
/// starting (docs/decisions/0002-read-ahead-1gib.md).
/// The helper stops asking when `work` returns.
pub(crate) fn reading_ahead_during<T>(input: &InputFile, work: impl FnOnce() -> T) -> T {
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        // Without the thread (refused by the system) the OS kernel reads
        // ahead as it would anyway.
        let _ = threads::spawn_scoped(s, || {
            let target = PREFETCH_AHEAD.min(input.len());
            let mut asked = 0;
            while asked < target && !done.load(Ordering::Relaxed) {
                let step = PREFETCH_STEP.min(target - asked);
                input.prefetch(asked, step);
                asked += step;
            }
        });
        let result = work();
        done.store(true, Ordering::Relaxed);
        result
    })
}

/// A thread that keeps the OS kernel reading `input` up to [`PREFETCH_AHEAD`]
/// bytes beyond the offset last sent to it; it ends when the sender is
/// dropped. Where the system refuses the thread, the positions go nowhere
/// and the OS kernel reads ahead as it would anyway.
fn prefetcher<'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    input: &'scope InputFile,
) -> std::sync::mpsc::Sender<u64> {
    let (reached, positions) = channel::<u64>();
    let _ = threads::spawn_scoped(scope, move || {
        let mut asked = 0u64;
        while let Ok(mut at) = positions.recv() {
            // Only the latest position matters.
            at = positions.try_iter().last().unwrap_or(at);
            let target = (at + PREFETCH_AHEAD).min(input.len());
            while asked < target {
                let step = PREFETCH_STEP.min(target - asked);
                input.prefetch(asked, step);
                asked += step;
            }
        }
    });
    reached
}

/// Reads M = P ‖ (all of `reader`) and calls `absorb` with pieces of
/// `piece_len` bytes (a multiple of the block size), the last one shorter.
/// Past its first few kilobytes, a helper thread reads the next piece while
/// `absorb` takes this one, so memory use is two pieces whatever the
/// input's length. `progress` is told the input's bytes of each piece once
/// it is absorbed. Returns the number of
/// bytes read from `reader` (the prefix not counted).
pub(crate) fn for_each_piece_of_sequential<E: From<io::Error>>(
    params: &dyn Framing,
    reader: &mut (dyn Read + Send),
    piece_len: usize,
    progress: &dyn Progress,
    mut absorb: impl FnMut(&[u8]) -> Result<(), E>,
) -> Result<u64, E> {
    let prefix = params.prefix();
    // The first bytes are read here: an input that ends within them (an
    // empty file, a short pipe) needs no helper thread and no large buffers.
    let mut first =
        vec![0u8; self::piece_len(params.block_size(), SMALL_SEQUENTIAL_READ).min(piece_len)];
    first[..prefix.len()].copy_from_slice(prefix);
    let filled = fill(reader, &mut first, prefix.len())?;
    let mut total = (filled - prefix.len()) as u64;
    if filled > 0 {
        absorb(&first[..filled])?;
        progress.advance(total);
    }
    if filled < first.len() {
        return Ok(total);
    }
    drop(first);
    std::thread::scope(|s| {
        let (full_tx, full) = sync_channel::<io::Result<(Vec<u8>, usize)>>(1);
        let (empty, empty_rx) = channel::<Vec<u8>>();
        threads::spawn_scoped(s, move || {
            for mut buf in empty_rx {
                let filled = fill(reader, &mut buf, 0);
                let last = !matches!(filled, Ok(n) if n == buf.len());
                if full_tx.send(filled.map(|n| (buf, n))).is_err() || last {
                    break;
                }
            }
        })
        .map_err(|refused| io::Error::other(refused.to_string()))?;
        for _ in 0..2 {
            let _ = empty.send(vec![0u8; piece_len]);
        }
        for piece in full {
            let (buf, filled) = piece?;
            if filled > 0 {
                absorb(&buf[..filled])?;
                progress.advance(filled as u64);
            }
            total += filled as u64;
            if filled < buf.len() {
                break;
            }
            let _ = empty.send(buf);
        }
        Ok(total)
    })
}

/// Fills `buf` from `start` until it is full or the reader ends: the bytes
/// now in `buf`.
fn fill(reader: &mut dyn Read, buf: &mut [u8], start: usize) -> io::Result<usize> {
    let mut filled = start;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::Source;

    /// Parameters whose prefix and block size are the ones given.
    fn params(prefix: &[u8], block_size: usize) -> TreeParams {
        let (a, p) = (crate::params::Algorithm::Sha3_256, prefix.to_vec());
        TreeParams::with_options(a, 1, 2, Some(block_size), p, None).unwrap()
    }

    fn bytes_of(piece: Piece<'_>) -> Vec<u8> {
        match piece {
            Piece::Memory(b) | Piece::Mapped { bytes: b, .. } => b.to_vec(),
            Piece::Unread { input, offset, len } => {
                let mut buf = vec![0u8; len];
                input.read_exact_at(&mut buf, offset).unwrap();
                buf
            }
        }
    }

    fn slice_pieces(prefix: &[u8], file: &[u8], b: usize, piece: usize) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        for_each_piece_of_slice::<()>(&params(prefix, b), file, piece, &(), |p| {
            out.push(bytes_of(p));
            Ok(())
        })
        .unwrap();
        out
    }

    #[test]
    fn slice_pieces_are_block_aligned_and_cover_m() {
        let file: Vec<u8> = (0..1000u32).map(|i| i as u8).collect();
        for prefix_len in [0usize, 1, 7, 8, 9, 40] {
            let prefix = vec![0xAA; prefix_len];
            let pieces = slice_pieces(&prefix, &file, 8, 64);
            let m: Vec<u8> = pieces.concat();
            assert_eq!(m, [prefix.clone(), file.clone()].concat());
            for p in &pieces[..pieces.len() - 1] {
                assert_eq!(p.len() % 8, 0, "prefix {prefix_len}");
            }
        }
    }

    /// Mapped pieces until the flag is set, unread ones after (those
    /// already mapped ahead still come mapped): the same bytes in order.
    #[test]
    fn pieces_come_unread_once_asked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let file: Vec<u8> = (0..3_000_000usize).map(|i| (i * 13 + 1) as u8).collect();
        std::fs::write(&path, &file).unwrap();
        let p = params(b"", 136);
        let Source::File(input) = Source::open(&path).unwrap() else {
            panic!("a regular file");
        };
        let unmapped = AtomicBool::new(false);
        let (mut got, mut kinds) = (Vec::new(), Vec::new());
        for_each_piece_of_file(
            &p,
            &input,
            136 * 1000,
            Access::Map,
            &unmapped,
            &(),
            |piece| {
                kinds.push(matches!(piece, Piece::Unread { .. }));
                got.extend(bytes_of(piece));
                if kinds.len() == 3 {
                    unmapped.store(true, Ordering::Relaxed);
                }
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(got, file);
        assert!(!kinds[0] && kinds.last() == Some(&true), "{kinds:?}");
    }

    #[test]
    fn file_pieces_match_slice_pieces_both_ways() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        for len in [1usize, 7, 4095, 4096, 4097, 100_000] {
            let file: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
            std::fs::write(&path, &file).unwrap();
            for prefix_len in [0usize, 1, 9, 255] {
                let prefix = vec![0x5C; prefix_len];
                let p = params(&prefix, 136 * 8);
                let want = slice_pieces(&prefix, &file, 136 * 8, 136 * 8 * 4);
                for access in [Access::Map, Access::Read] {
                    let Source::File(input) = Source::open(&path).unwrap() else {
                        panic!("a regular file");
                    };
                    let mut got = Vec::new();
                    for_each_piece_of_file(
                        &p,
                        &input,
                        136 * 8 * 4,
                        access,
                        &AtomicBool::new(false),
                        &(),
                        |p| {
                            got.push(bytes_of(p));
                            Ok(())
                        },
                    )
                    .unwrap();
                    assert_eq!(got, want, "{len} bytes, prefix {prefix_len}, {access:?}");
                }
            }
        }
    }

    #[test]
    fn piece_lengths_are_whole_blocks_whatever_is_asked() {
        for target in [0, 1, 255, 4096, MAX_PIECE, MAX_PIECE + 1, usize::MAX] {
            for b in [8, 136, 1 << 24] {
                let len = piece_len(b, target);
                assert!(len.is_multiple_of(b) && len > crate::params::TreeParams::MAX_PREFIX_LEN);
                assert!(len <= MAX_PIECE, "{target} {b}");
            }
        }
    }

    #[test]
    fn empty_message_has_no_pieces() {
        assert!(slice_pieces(&[], &[], 8, 8).is_empty());
    }

    #[test]
    fn sequential_pieces_are_full_until_the_last() {
        let data: Vec<u8> = (0..300u32).map(|i| i as u8).collect();
        for len in [0usize, 1, 61, 64, 300] {
            let mut pieces = Vec::new();
            let read = for_each_piece_of_sequential::<io::Error>(
                &params(&[9, 9, 9], 8),
                &mut &data[..len],
                64,
                &(),
                |p| {
                    pieces.push(p.to_vec());
                    Ok(())
                },
            )
            .unwrap();
            assert_eq!(read, len as u64);
            assert!(pieces[..pieces.len() - 1].iter().all(|p| p.len() == 64));
            assert_eq!(pieces.concat(), [&[9, 9, 9], &data[..len]].concat());
        }
    }

    /// A reader that fails after `good` bytes.
    struct Failing {
        good: usize,
    }

    impl Read for Failing {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.good == 0 {
                return Err(io::Error::from_raw_os_error(libc::EIO));
            }
            let n = buf.len().min(self.good).min(10);
            buf[..n].fill(1);
            self.good -= n;
            Ok(n)
        }
    }

    #[test]
    fn a_sequential_read_error_part_way_is_returned_and_nothing_after_it_is_absorbed() {
        let mut absorbed = 0;
        let err = for_each_piece_of_sequential::<io::Error>(
            &params(&[], 8),
            &mut Failing { good: 1000 },
            256,
            &(),
            |p| {
                absorbed += p.len();
                Ok(())
            },
        )
        .unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EIO));
        assert_eq!(absorbed, 768);
    }

    use crate::progress::CountingProgress as Count;

    #[test]
    fn progress_counts_every_file_byte_and_no_prefix_byte() {
        let file: Vec<u8> = (0..5000u32).map(|i| i as u8).collect();
        for prefix_len in [0usize, 3, 255] {
            let prefix = vec![1u8; prefix_len];
            let count = Count::default();
            let p = params(&prefix, 8);
            for_each_piece_of_slice::<()>(&p, &file, 512, &count, |_| Ok(())).unwrap();
            assert_eq!(count.0.into_inner(), 5000);
            let count = Count::default();
            for_each_piece_of_sequential::<io::Error>(&p, &mut &file[..], 512, &count, |_| Ok(()))
                .unwrap();
            assert_eq!(count.0.into_inner(), 5000);
        }
    }
}
