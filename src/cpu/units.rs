//! The units of one walk (the states of its leaves) in one anonymous
//! mapping. At H = 12 they reach 3.4 GB (2^24 leaves of 200 bytes). A `Vec`
//! grown piece by piece would copy them at every reallocation (its 64-byte
//! alignment keeps the allocator from moving pages with `mremap`) and fault
//! every copy in anew, so that a large tree's time goes to the kernel and
//! its peak RSS to the copies
//! (docs/decisions/0010-leaf-states-in-one-mapping.md). Here the mapping
//! grows by `mremap`, which moves its pages without copying them; a unit's
//! memory is first touched by the worker that absorbs into it; and `finish`
//! gives the pages of padded units back while it writes the outputs.
//!
//! A small store lives on the heap instead: a mapping of its own costs two
//! system calls per input, and unmapping it interrupts every thread of the
//! process to flush its TLB, which a list of small files, each hashed by
//! one of 16 threads, pays thousands of times over.

use std::io;
use std::marker::PhantomData;

use memmap2::{MmapMut, MmapOptions};

use super::workers::Workers;

/// A unit type whose fresh value (leaves that have absorbed nothing) is all
/// zero bytes.
///
/// # Safety
///
/// All-zero bytes must be a valid value of the type, and the fresh one; the
/// type must have no drop glue (the store never drops its units), and an
/// alignment of at most 4096 bytes (a page).
pub(crate) unsafe trait FreshIsZero: Sized + Send + Sync {
    /// The fresh value.
    fn fresh() -> Self {
        // SAFETY: all-zero bytes are a value of `Self` (the trait's contract).
        unsafe { std::mem::zeroed() }
    }

    /// Makes every unit of `units` fresh.
    fn make_fresh(units: &mut [Self]) {
        // SAFETY: all-zero bytes are a value of `Self`, with no drop glue
        // for the values written over (the trait's contract).
        unsafe { std::ptr::write_bytes(units.as_mut_ptr(), 0, units.len()) }
    }
}

/// Bytes of units that one task of [`UnitStore::copy_on`] copies.
const COPY_TASK_BYTES: usize = 256 << 10;

/// Stores of at most this many bytes live on the heap (see the module doc).
const HEAP_MAX: usize = 1 << 20;

/// Where the units are kept.
enum Backing<U> {
    /// No unit yet.
    Nothing,
    /// On the heap: every element a unit, the first `len` in use.
    Heap(Vec<U>),
    /// In an anonymous mapping of their own.
    Map(MmapMut),
}

/// The units in use, and room for more: untouched pages of a mapping cost
/// no memory until a unit there is written.
pub(super) struct UnitStore<U> {
    backing: Backing<U>,
    len: usize,
    units: PhantomData<U>,
}

impl<U: FreshIsZero> UnitStore<U> {
    /// No units, and no memory for them yet.
    pub(super) const fn new() -> Self {
        const { assert!(size_of::<U>() > 0 && align_of::<U>() <= 4096) };
        UnitStore {
            backing: Backing::Nothing,
            len: 0,
            units: PhantomData,
        }
    }

    /// The units in use.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// The units there is room for.
    fn capacity(&self) -> usize {
        match &self.backing {
            Backing::Nothing => 0,
            Backing::Heap(units) => units.len(),
            Backing::Map(map) => map.len() / size_of::<U>(),
        }
    }

    /// Makes `len` units (never fewer than now) in use: the new ones fresh,
    /// in memory not yet touched. Where the store must grow, it grows to
    /// twice its size (amortised, for inputs that come piece by piece), but
    /// never past `most` units, and only as far as needed where the system
    /// refuses that much address space.
    pub(super) fn grow_to(&mut self, len: usize, most: usize) -> io::Result<()> {
        debug_assert!(len >= self.len && len <= most);
        if len > self.capacity() {
            let doubled = (2 * self.capacity()).min(most);
            if doubled <= len || self.reserve(doubled).is_err() {
                self.reserve(len)?;
            }
        }
        self.len = self.len.max(len);
        Ok(())
    }

    /// Room for `capacity` units: on the heap while they are few; else a
    /// new mapping, or the old one moved (never copied) where it cannot grow
    /// in place.
    fn reserve(&mut self, capacity: usize) -> io::Result<()> {
        let bytes = capacity
            .checked_mul(size_of::<U>())
            .ok_or_else(|| io::Error::from(io::ErrorKind::OutOfMemory))?;
        let failed = |e: io::Error| {
            io::Error::new(
                e.kind(),
                format!("{} MiB of leaf states: {e}", bytes.div_ceil(1 << 20)),
            )
        };
        if bytes <= HEAP_MAX {
            let units = match &mut self.backing {
                Backing::Heap(units) => units,
                backing => {
                    *backing = Backing::Heap(Vec::new());
                    let Backing::Heap(units) = backing else {
                        unreachable!("just made")
                    };
                    units
                }
            };
            units.resize_with(capacity, U::fresh);
            return Ok(());
        }
        match &mut self.backing {
            #[cfg(target_os = "linux")]
            // SAFETY: an anonymous mapping, so there is no file end to pass,
            // and `&mut self` holds it: no reference into it is alive while
            // it moves. Its new pages are zero, fresh units (`FreshIsZero`).
            Backing::Map(map) => unsafe {
                map.remap(bytes, memmap2::RemapOptions::new().may_move(true))
                    .map_err(failed)?
            },
            backing => {
                let mut map = map_zeroed(bytes).map_err(failed)?;
                let old = match backing {
                    Backing::Heap(units) => as_bytes(units),
                    #[cfg(not(target_os = "linux"))]
                    Backing::Map(old) => &old[..],
                    _ => &[],
                };
                map[..old.len()].copy_from_slice(old);
                *backing = Backing::Map(map);
            }
        }
        if let Backing::Map(map) = &self.backing {
            ask_for_huge_pages(map);
        }
        Ok(())
    }

    /// The units in use, in chunks of `units` (the last perhaps shorter),
    /// whose pages [`Chunk::release`] gives back once a task is done with them.
    pub(super) fn chunks_mut(&mut self, units: usize) -> impl Iterator<Item = Chunk<'_, U>> {
        let releasable = matches!(self.backing, Backing::Map(_));
        self.as_mut()
            .chunks_mut(units.max(1))
            .map(move |units| Chunk { units, releasable })
    }
}

impl<U: FreshIsZero + Clone> UnitStore<U> {
    /// A second store of the same units in use, copied side by side on
    /// `workers` (each copies and so first touches its own pages), with
    /// room for them alone: it grows as any store does.
    pub(super) fn copy_on(&self, workers: Workers<'_>) -> io::Result<Self> {
        let mut copy = UnitStore::new();
        copy.grow_to(self.len, self.len)?;
        let per_task = (COPY_TASK_BYTES / size_of::<U>()).max(1);
        workers.for_each_pair(
            (copy.as_mut(), per_task),
            (self.as_ref(), per_task),
            1,
            |_, to, from| to.clone_from_slice(from),
        );
        Ok(copy)
    }
}

/// The bytes of `units`, to copy them into a mapping.
fn as_bytes<U: FreshIsZero>(units: &[U]) -> &[u8] {
    // SAFETY: the units are initialised values of a type whose every byte
    // pattern the store may hold (`FreshIsZero`: plain data, no drop glue);
    // reading them as bytes reads initialised memory of the same length.
    unsafe { std::slice::from_raw_parts(units.as_ptr().cast::<u8>(), size_of_val(units)) }
}

impl<U: FreshIsZero> AsRef<[U]> for UnitStore<U> {
    fn as_ref(&self) -> &[U] {
        match &self.backing {
            Backing::Nothing => &[],
            Backing::Heap(units) => &units[..self.len],
            // SAFETY: the mapping starts on a page, aligned for `U`, and
            // holds at least `len` units, each written as a `U` or still
            // zero bytes, a valid `U` (`FreshIsZero`).
            Backing::Map(map) => unsafe {
                std::slice::from_raw_parts(map.as_ptr().cast::<U>(), self.len)
            },
        }
    }
}

impl<U: FreshIsZero> AsMut<[U]> for UnitStore<U> {
    fn as_mut(&mut self) -> &mut [U] {
        match &mut self.backing {
            Backing::Nothing => &mut [],
            Backing::Heap(units) => &mut units[..self.len],
            // SAFETY: as in `as_ref`, and `&mut self` borrows the mapping
            // exclusively.
            Backing::Map(map) => unsafe {
                std::slice::from_raw_parts_mut(map.as_mut_ptr().cast::<U>(), self.len)
            },
        }
    }
}

/// Some units of a [`UnitStore`], held by one task.
pub(super) struct Chunk<'a, U> {
    units: &'a mut [U],
    /// The units lie in the store's own mapping (not on the heap).
    releasable: bool,
}

impl<U: FreshIsZero> Chunk<'_, U> {
    /// The units.
    pub(super) fn units(&self) -> &[U] {
        self.units
    }

    /// Gives the pages that lie wholly within these units back to the
    /// system: the caller is done with them (they read as fresh units from
    /// then on). A hint where it fails, for units on the heap (few), and
    /// elsewhere than on Linux.
    pub(super) fn release(self) {
        #[cfg(target_os = "linux")]
        if self.releasable {
            let page = page_size();
            let start = self.units.as_mut_ptr() as usize;
            let end = start + std::mem::size_of_val(self.units);
            let (from, to) = (start.next_multiple_of(page), end - end % page);
            if from < to {
                // SAFETY: [from, to) lies within this chunk, which `self`
                // borrows exclusively, in a private anonymous mapping of the
                // store's own (`releasable`). MADV_DONTNEED makes those bytes
                // zero, as a write of fresh units through the borrow would
                // (`FreshIsZero`), and touches nothing else.
                unsafe {
                    libc::madvise(from as *mut libc::c_void, to - from, libc::MADV_DONTNEED);
                }
            }
        }
        // Elsewhere MADV_DONTNEED need not zero the pages: nothing is given back.
        #[cfg(not(target_os = "linux"))]
        let _ = self.releasable;
    }
}

/// `bytes` of zeroed memory, not yet touched.
fn map_zeroed(bytes: usize) -> io::Result<MmapMut> {
    MmapOptions::new().len(bytes).map_anon()
}

/// Asks for transparent huge pages on a large mapping (fewer faults and TLB
/// misses); a hint, refused where they are off.
fn ask_for_huge_pages(map: &MmapMut) {
    #[cfg(target_os = "linux")]
    if map.len() >= HUGE_PAGES_FROM {
        let _ = map.advise(memmap2::Advice::HugePage);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = map;
}

/// Mappings of at least this many bytes ask for transparent huge pages.
#[cfg(target_os = "linux")]
const HUGE_PAGES_FROM: usize = 4 << 20;

/// The system's page size.
#[cfg(target_os = "linux")]
fn page_size() -> usize {
    use std::sync::OnceLock;
    static PAGE: OnceLock<usize> = OnceLock::new();
    // SAFETY: sysconf only reads a system setting.
    *PAGE.get_or_init(|| {
        usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(1 << 16)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A unit of 200 bytes, as a lane group's leaf: no multiple of a page.
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Words([u64; 25]);

    // SAFETY: 25 words: all zero is a value; no drop glue; aligned to 8.
    unsafe impl FreshIsZero for Words {}

    fn numbered(k: usize) -> Words {
        Words(std::array::from_fn(|i| (k * 25 + i) as u64 + 1))
    }

    /// Units keep their values while the mapping grows (by `mremap` on
    /// Linux, moved or not), new ones are fresh, and the growth doubles but
    /// stops at the most asked for.
    #[test]
    fn units_survive_growth_and_new_ones_are_fresh() {
        let mut store = UnitStore::<Words>::new();
        assert_eq!((store.len(), store.capacity()), (0, 0));
        let most = 200_000;
        let mut len = 0;
        for step in [1, 2, 100, 5_000, 20_000, 60_000, 114_897] {
            store.grow_to(len + step, most).unwrap();
            let units = store.as_mut();
            assert!(units[len..].iter().all(|u| *u == Words::fresh()));
            for (k, unit) in units.iter_mut().enumerate().skip(len) {
                *unit = numbered(k);
            }
            len += step;
            assert!(store.capacity() >= len && store.capacity() <= most);
            // Something mapped behind it, so that the next growth may have to move.
            let _neighbour = MmapOptions::new().len(4096).map_anon().unwrap();
            assert!(
                store
                    .as_ref()
                    .iter()
                    .enumerate()
                    .all(|(k, u)| *u == numbered(k))
            );
        }
        assert_eq!(len, most);
        assert_eq!(store.capacity(), most);
        // Growing to the length it has changes nothing.
        store.grow_to(most, most).unwrap();
        assert_eq!(store.len(), most);
    }

    /// A copy holds the same units, on the heap or in a mapping, copied
    /// inline or on a pool; it goes on apart from the original and grows.
    #[test]
    fn copies_hold_the_same_units_and_go_on_apart() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        // On the heap, and in a mapping of several tasks' worth.
        for len in [0, 1, 3_000, 40_000] {
            for workers in [Workers::Inline, Workers::Pool(&pool)] {
                let mut store = UnitStore::<Words>::new();
                store.grow_to(len, 2 * len).unwrap();
                for (k, unit) in store.as_mut().iter_mut().enumerate() {
                    *unit = numbered(k);
                }
                let mut copy = store.copy_on(workers).unwrap();
                assert_eq!(copy.len(), len);
                assert!(
                    copy.as_ref()
                        .iter()
                        .enumerate()
                        .all(|(k, u)| *u == numbered(k))
                );
                for unit in store.as_mut() {
                    *unit = Words::fresh();
                }
                copy.grow_to(2 * len, 2 * len).unwrap();
                let (kept, grown) = copy.as_ref().split_at(len);
                assert!(kept.iter().enumerate().all(|(k, u)| *u == numbered(k)));
                assert!(grown.iter().all(|u| *u == Words::fresh()));
            }
        }
    }

    /// A chunk gives back only the pages that lie wholly within it: those
    /// units read as fresh, every other unit keeps its value.
    #[test]
    fn released_chunks_give_back_only_their_own_pages() {
        let mut store = UnitStore::<Words>::new();
        let len = 10_000;
        store.grow_to(len, len).unwrap();
        for (k, unit) in store.as_mut().iter_mut().enumerate() {
            *unit = numbered(k);
        }
        // Chunks of 100 units (20,000 bytes): each holds some whole pages.
        let per_chunk = 100;
        store
            .chunks_mut(per_chunk)
            .enumerate()
            .filter(|(c, _)| c % 2 == 1)
            .for_each(|(_, chunk)| chunk.release());
        let base = store.as_ref().as_ptr() as usize;
        let unit = size_of::<Words>();
        for (k, value) in store.as_ref().iter().enumerate() {
            let chunk = k / per_chunk;
            let (start, end) = (base + k * unit, base + (k + 1) * unit);
            let chunk_start = base + chunk * per_chunk * unit;
            let chunk_end = chunk_start + per_chunk * unit;
            #[cfg(target_os = "linux")]
            let page = page_size();
            #[cfg(not(target_os = "linux"))]
            let page = 4096;
            // Bytes on a page that lies wholly within the chunk.
            let first_page = chunk_start.next_multiple_of(page);
            let last_page = chunk_end - chunk_end % page;
            let wholly_released = chunk % 2 == 1 && start >= first_page && end <= last_page;
            let untouched = chunk % 2 == 0 || end <= first_page || start >= last_page;
            if cfg!(target_os = "linux") && wholly_released {
                assert_eq!(*value, Words::fresh(), "unit {k}");
            } else if untouched || !cfg!(target_os = "linux") {
                assert_eq!(*value, numbered(k), "unit {k}");
            } else {
                // Straddles a page edge inside a released chunk: part zero,
                // part kept, word by word.
                for (i, word) in value.0.iter().enumerate() {
                    assert!(*word == 0 || *word == numbered(k).0[i], "unit {k}");
                }
            }
        }
    }
}
