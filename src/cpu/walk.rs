//! The walk over the message, written once for every leaf kernel: which
//! block goes to which leaf, in which order, on which thread. A kernel only
//! says how a unit of `WIDTH` neighbouring leaves absorbs blocks ([`Absorb`]).
//!
//! A walk owns a contiguous range of leaves, all L of them or a part when
//! several engines share a message. Its blocks are one run in each stripe,
//! so its units absorb straight from the stripe whatever the range.
//!
//! States are kept only for owned leaves that hold at least one block
//! (leaves 0 … min(blocks, L) − 1 do, filling in order until the first
//! wrap), so memory and work follow the input's size, not L. They live in
//! one [`UnitStore`], which grows without copying them; a new unit's memory
//! is first touched by the worker that absorbs into it, and `finish` gives
//! it back as it goes.

use std::io;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use super::units::{FreshIsZero, UnitStore};
use super::workers::Workers;
use crate::error::HashError;
use crate::input::{InputFile, with_read_buffer};
use crate::params::TreeParams;
use crate::tree::Dealing;

/// Leaves per rayon task at most: 1024 states are about 208 KiB, an L2's worth.
const MAX_TASK_LEAVES: usize = 1024;
/// Bytes a task reads from a file at once, at most: its run of a stripe
/// (1024 leaves' blocks are 139–172 KiB at the SHA-3 rates), still in the
/// core's cache when it is absorbed
/// (docs/decisions/0006-unread-pieces-read-per-task.md).
const READ_RUN_MAX: usize = 256 << 10;
/// A task whose bytes of a stripe are a run shorter than this asks for its
/// bytes of the stripe `PREFETCH_STRIPES` ahead while it absorbs the current
/// one. With few leaves such runs (1088 bytes at L = 256) lie a stripe apart,
/// too far for the hardware prefetchers to follow. Longer runs the hardware
/// follows by itself, and a software prefetch there costs time
/// (docs/decisions/0008-prefetch-short-runs.md).
const PREFETCH_RUN_MAX: usize = 16 << 10;
const PREFETCH_STRIPES: u64 = 2;
/// Tasks per thread a piece is cut into, so that threads that finish early
/// (or run on a busier core) find work left.
const TASKS_PER_THREAD: usize = 4;
/// With fewer units than that (L = 256 has 32 units of eight leaves for 16
/// threads), a unit's blocks of a piece are absorbed in slices of about this
/// many bytes, one slice at a time by whichever thread is free. A whole unit
/// per task leaves threads idle at the end of every piece while a thread on
/// a busier core finishes its unit
/// (docs/decisions/0009-slices-for-few-units.md).
const SLICE_BYTES_PER_UNIT: usize = 32 << 10;
/// Leaves per task of `finish_with`: their states, absorbed and padded in
/// a buffer of the task's own, are 26 KiB, within an L1 cache.
const FUSED_TASK_LEAVES: usize = 128;
/// States padded by one task of `finish` at most, and given back after it.
const FINISH_TASK_BYTES: usize = 4 << 20;

/// How one leaf kernel absorbs blocks into a unit of `WIDTH` neighbouring leaves.
pub(crate) trait Absorb: Clone + Send + Sync {
    /// Leaves per unit.
    const WIDTH: usize;
    /// The states of one unit's leaves; all zero bytes while they have
    /// absorbed nothing.
    type Unit: FreshIsZero + Clone;

    /// `WIDTH` whole blocks, back to back in `blocks` (`WIDTH`·B bytes), one
    /// for each leaf of the unit, in leaf order.
    fn absorb_blocks(&self, unit: &mut Self::Unit, blocks: &[u8]);

    /// The next bytes of leaf `lane` of the unit: whole blocks, the last of
    /// which may be short (only the message's last block is).
    fn absorb_leaf(&self, unit: &mut Self::Unit, lane: usize, bytes: &[u8]);

    /// Pads the unit's first `leaf_lens.len()` leaves (leaf i holds
    /// `leaf_lens[i]` bytes) and writes their outputs to `out`, one after the
    /// other, `out.len() / leaf_lens.len()` bytes each.
    fn finish_unit(&self, unit: &Self::Unit, leaf_lens: &[u64], out: &mut [u8]);

    /// Leaf `lane` of the unit as a [`LeafStates`](crate::engine::LeafStates)
    /// entry: its Keccak state with the bytes of an unfinished rate block
    /// XORed in.
    fn leaf_state(&self, unit: &Self::Unit, lane: usize) -> [u64; 25];

    /// Makes leaf `lane` of the unit the leaf whose state (as
    /// [`leaf_state`](Absorb::leaf_state) gives it) is `state` after
    /// absorbing `absorbed` bytes.
    fn set_leaf_state(&self, unit: &mut Self::Unit, lane: usize, state: [u64; 25], absorbed: u64);
}

/// The states of the leaves `owned` (a contiguous range) while M is
/// absorbed, piece by piece. Unit u holds leaves `owned.start + u·WIDTH` on.
pub(super) struct Leaves<'a, A: Absorb> {
    params: &'a TreeParams,
    workers: Workers<'a>,
    kernel: A,
    owned: Range<u64>,
    /// The units of the owned leaves that hold a block (at least).
    units: UnitStore<A::Unit>,
    /// Bytes of M absorbed so far (a whole number of blocks until the last piece).
    message_len: u64,
    /// A unit's bytes per slice where units are too few for the threads.
    slice_bytes: usize,
    /// Pieces absorbed in slices (tests check that they were).
    #[cfg(test)]
    pub pieces_in_slices: usize,
}

impl<'a, A: Absorb> Leaves<'a, A> {
    /// The leaves `owned` (within 0 … L − 1), positioned after the first
    /// `message_len` bytes of M (a whole number of blocks, or all of M) and
    /// fresh: [`set_states`](Self::set_states) gives them what they hold.
    pub(super) fn new(
        params: &'a TreeParams,
        workers: Workers<'a>,
        kernel: A,
        owned: Range<u64>,
        message_len: u64,
    ) -> Self {
        Leaves {
            params,
            workers,
            kernel,
            owned,
            units: UnitStore::new(),
            message_len,
            slice_bytes: SLICE_BYTES_PER_UNIT,
            #[cfg(test)]
            pieces_in_slices: 0,
        }
    }

    /// The same leaves with slices of `bytes` per unit (tests: many slices
    /// in a short message).
    #[cfg(test)]
    pub(super) fn with_slice_bytes(mut self, bytes: usize) -> Self {
        self.slice_bytes = bytes;
        self
    }

    /// The same leaves in the same state, their units copied side by side
    /// on the workers, to go on apart from these.
    pub(super) fn fork(&self) -> io::Result<Self> {
        Ok(Leaves {
            params: self.params,
            workers: self.workers,
            kernel: self.kernel.clone(),
            owned: self.owned.clone(),
            units: self.units.copy_on(self.workers)?,
            message_len: self.message_len,
            slice_bytes: self.slice_bytes,
            #[cfg(test)]
            pieces_in_slices: 0,
        })
    }

    /// The leaves these states are.
    pub(super) fn owned(&self) -> Range<u64> {
        self.owned.clone()
    }

    /// Bytes of M absorbed so far.
    pub(super) fn message_len(&self) -> u64 {
        self.message_len
    }

    /// Moves past the next `len` bytes of M, which hold none of its
    /// leaves' blocks (it owns none).
    pub(super) fn skip(&mut self, len: usize) {
        debug_assert!(self.owned.is_empty());
        self.message_len += len as u64;
    }

    /// The owned leaves that hold a block once blocks 0 … `blocks` − 1 are
    /// absorbed: a prefix of `owned`, as leaves fill in order.
    fn holding(&self, blocks: u64) -> Range<u64> {
        let end = Dealing::of(self.params).leaves_holding(blocks);
        self.owned.start..end.clamp(self.owned.start, self.owned.end)
    }

    /// Absorbs the blocks of the owned leaves in the next piece of M, which
    /// starts on a block boundary; block i goes to leaf i mod L, in order.
    /// An error only where memory for new leaves' states cannot be had.
    pub(super) fn absorb(&mut self, piece: &[u8]) -> Result<(), HashError> {
        self.absorb_bytes(PieceBytes::Memory(piece))
    }

    /// Whether [`absorb_unread`](Self::absorb_unread) can take the next
    /// piece, of `len` bytes: where the pool's tasks each walk a range of
    /// leaves (not a single sponge, not slices of a few units), and a
    /// unit's blocks fit in one read.
    pub(super) fn reads_per_task(&self, len: usize) -> bool {
        matches!(self.workers, Workers::Pool(_))
            && self.params.leaf_count() > 1
            && A::WIDTH * self.params.block_size() <= READ_RUN_MAX
            && !self.owned.is_empty()
            && self.slicing(&self.walk(len)).is_none()
    }

    /// Absorbs the next piece of M, `len` bytes of `input` from `offset`,
    /// where [`reads_per_task`](Self::reads_per_task) says it can: each
    /// task reads its own leaves' run of every stripe into its worker's
    /// buffer and absorbs it while it is in the core's cache, so that a
    /// piece of a part (whose runs are a share of every stripe) costs one
    /// pass over memory, not a copy and then a pass. An error where the
    /// input cannot be read, memory for new leaves' states cannot be had,
    /// or the piece is one its tasks cannot read (a single sponge, slices).
    pub(super) fn absorb_unread(
        &mut self,
        input: &InputFile,
        offset: u64,
        len: usize,
    ) -> Result<(), HashError> {
        self.absorb_bytes(PieceBytes::File { input, offset, len })
    }

    /// The walk over the next piece of M, of `len` bytes.
    fn walk(&self, len: usize) -> Walk {
        let b = self.params.block_size();
        let first = self.message_len / b as u64;
        Walk {
            len,
            first,
            end: first + len.div_ceil(b) as u64,
            leaf_count: self.params.leaf_count(),
            owned: self.owned.clone(),
            block_size: b,
        }
    }

    /// Where `walk`'s piece is absorbed in slices (few units for many
    /// threads): the one range of units it touches.
    fn slicing(&self, walk: &Walk) -> Option<Range<usize>> {
        let ranges = touched_units(walk.first, walk.end, walk.leaf_count, &self.owned, A::WIDTH);
        let touched: usize = ranges.iter().map(|r| r.len()).sum();
        let threads = self.workers.threads();
        let [range, rest] = ranges;
        (matches!(self.workers, Workers::Pool(_))
            && rest.is_empty()
            && threads > 1
            && touched < threads * TASKS_PER_THREAD
            && walk.slices::<A>(self.slice_bytes).len() > 1)
            .then_some(range)
    }

    fn absorb_bytes(&mut self, piece: PieceBytes<'_>) -> Result<(), HashError> {
        let walk = self.walk(piece.len());
        if self.owned.is_empty() {
            self.message_len += piece.len() as u64;
            return Ok(());
        }
        let slicing = self.slicing(&walk);
        let (single, sliced) = (walk.leaf_count == 1, slicing.is_some());
        if matches!(piece, PieceBytes::File { .. }) && (single || sliced) {
            // Callers ask `reads_per_task` first.
            return Err(HashError::Internal(
                "a piece that its tasks cannot read is left unread".into(),
            ));
        }
        // Units from `fresh` on have not been touched yet.
        let fresh = self.units.len();
        self.grow_for(walk.end)?;
        self.message_len += piece.len() as u64;
        let (kernel, units) = (&self.kernel, self.units.as_mut());
        if let (true, PieceBytes::Memory(piece)) = (single, piece) {
            // All of M is leaf 0's, in order. On a pool thread, not the caller's:
            // workers that just finished spin for a while, and one more busy
            // thread than cores would halve this single sponge's speed.
            if let Some(unit) = units.first_mut() {
                self.workers.run(|| kernel.absorb_leaf(unit, 0, piece));
            }
            return Ok(());
        }
        let threads = self.workers.threads();
        if let (Some(range), Workers::Pool(pool), PieceBytes::Memory(piece)) =
            (slicing, self.workers, piece)
        {
            let slices: Vec<_> = walk
                .slices::<A>(self.slice_bytes)
                .into_iter()
                .map(|(walk, bytes)| (walk, &piece[bytes]))
                .collect();
            let start = range.start;
            let units = &mut units[range];
            pool.install(|| run_in_slices(&slices, kernel, start, units, threads));
            #[cfg(test)]
            {
                self.pieces_in_slices += 1;
            }
            return Ok(());
        }
        // Several tasks per thread for balance, and few enough leaves per task
        // that their states stay in the core's cache from stripe to stripe.
        let ranges = touched_units(walk.first, walk.end, walk.leaf_count, &self.owned, A::WIDTH);
        let touched: usize = ranges.iter().map(|r| r.len()).sum();
        let per_task = touched
            .div_ceil(threads * TASKS_PER_THREAD)
            .clamp(1, (MAX_TASK_LEAVES / A::WIDTH).max(1));
        for range in ranges.into_iter().filter(|r| !r.is_empty()) {
            let start = range.start;
            self.workers
                .try_for_each_chunk(&mut units[range], per_task, |t, task| {
                    let first_unit = start + t * per_task;
                    // A new unit's pages are first written, not read: read
                    // first, a page would fault twice (the zero page, then
                    // its copy).
                    let new = fresh.saturating_sub(first_unit).min(task.len());
                    A::Unit::make_fresh(&mut task[new..]);
                    walk.run(kernel, first_unit, task, piece)
                })?;
        }
        Ok(())
    }

    /// Makes room for the units of the owned leaves that hold a block once
    /// blocks 0 … `blocks` − 1 are absorbed (never more than the owned
    /// leaves' worth): fresh, in memory not yet touched.
    fn grow_for(&mut self, blocks: u64) -> io::Result<()> {
        let units = |leaves: Range<u64>| ((leaves.end - leaves.start) as usize).div_ceil(A::WIDTH);
        let (holding, most) = (units(self.holding(blocks)), units(self.owned.clone()));
        self.units.grow_to(holding.max(self.units.len()), most)
    }

    /// The state of every owned leaf that holds a block, in leaf order.
    pub(super) fn states(&self) -> Vec<[u64; 25]> {
        let w = A::WIDTH as u64;
        let holding = self.holding(self.blocks());
        let units = self.units.as_ref();
        (0..holding.end - holding.start)
            .map(|k| match units.get((k / w) as usize) {
                Some(unit) => self.kernel.leaf_state(unit, (k % w) as usize),
                // Not absorbed into since `new`: fresh.
                None => [0; 25],
            })
            .collect()
    }

    /// Owns the leaves `owned` from now on, whose states are `states` in leaf
    /// order: one for each leaf that holds a block, or fewer, the rest
    /// fresh. States past the leaves that hold a block are ignored: those
    /// leaves are fresh. An error only where memory for them cannot be had.
    pub(super) fn set_states(&mut self, owned: Range<u64>, states: &[[u64; 25]]) -> io::Result<()> {
        self.owned = owned;
        self.units = UnitStore::new();
        let holding = self.holding(self.blocks());
        self.grow_for(self.blocks())?;
        let (kernel, units) = (&self.kernel, self.units.as_mut());
        let lengths = Dealing::of(self.params).leaf_lengths(self.message_len);
        for (k, (state, leaf)) in states.iter().zip(holding).enumerate() {
            let absorbed = lengths.of(leaf);
            kernel.set_leaf_state(&mut units[k / A::WIDTH], k % A::WIDTH, *state, absorbed);
        }
        Ok(())
    }

    /// Blocks of M absorbed so far.
    fn blocks(&self) -> u64 {
        Dealing::of(self.params).blocks(self.message_len)
    }

    /// Pads every owned leaf that holds a block: their outputs in leaf order,
    /// `params.leaf_output_len()` bytes each (the other leaves are empty).
    /// Each task gives its units' memory back once they are padded, so that
    /// the outputs take its place rather than add to it. An error only where
    /// memory for states cannot be had (leaves never absorbed into).
    pub(super) fn finish(mut self) -> io::Result<Vec<u8>> {
        let params = self.params;
        let (w, out_len) = (A::WIDTH, params.leaf_output_len());
        let holding = self.holding(self.blocks());
        self.grow_for(self.blocks())?;
        let mut out = vec![0u8; (holding.end - holding.start) as usize * out_len];
        let threads = self.workers.threads();
        let per_task = (FINISH_TASK_BYTES / size_of::<A::Unit>())
            .min(self.units.len().div_ceil(threads * TASKS_PER_THREAD))
            .max((64 / w).max(1));
        let kernel = &self.kernel;
        let lengths = Dealing::of(params).leaf_lengths(self.message_len);
        // Each task: its outputs and its units, taken out once.
        let mut tasks: Vec<_> = out
            .chunks_mut(per_task * w * out_len)
            .zip(self.units.chunks_mut(per_task))
            .map(Some)
            .collect();
        self.workers.for_each_chunk(&mut tasks, 1, |t, task| {
            let Some((outs, units)) = task[0].take() else {
                return;
            };
            let mut lens = Vec::with_capacity(w);
            let first = holding.start + (t * per_task * w) as u64;
            for (u, (outs, unit)) in outs.chunks_mut(w * out_len).zip(units.units()).enumerate() {
                let first = first + (u * w) as u64;
                lens.clear();
                lens.extend(
                    (first..first + (outs.len() / out_len) as u64).map(|leaf| lengths.of(leaf)),
                );
                kernel.finish_unit(unit, &lens, outs);
            }
            units.release();
        });
        drop(tasks);
        Ok(out)
    }

    /// Absorbs all of M, `message` (one piece), into leaves that have
    /// absorbed nothing, and pads them at once: their outputs, as
    /// [`finish`](Self::finish) gives them. Each task's units are made,
    /// absorb their blocks and are padded in a buffer of its own, a few
    /// dozen KiB, so the states never reach the store: a message of one
    /// piece (a file of a list, hashed on one thread) costs no memory for
    /// them, no page faults and no pass over them to pad them
    /// (docs/decisions/0024-one-piece-leaves-padded-at-once.md).
    pub(super) fn finish_with(mut self, message: &[u8]) -> Vec<u8> {
        debug_assert!(self.message_len == 0 && self.units.len() == 0);
        let params = self.params;
        let (w, b, out_len) = (A::WIDTH, params.block_size(), params.leaf_output_len());
        let end = message.len().div_ceil(b) as u64;
        self.message_len = message.len() as u64;
        let holding = self.holding(end);
        let mut out = vec![0u8; (holding.end - holding.start) as usize * out_len];
        let walk = Walk {
            len: message.len(),
            first: 0,
            end,
            leaf_count: params.leaf_count(),
            owned: self.owned.clone(),
            block_size: b,
        };
        let kernel = &self.kernel;
        let lengths = Dealing::of(params).leaf_lengths(self.message_len);
        let per_task = (FUSED_TASK_LEAVES / w).max(1);
        self.workers
            .for_each_chunk(&mut out, per_task * w * out_len, |t, outs| {
                let first_unit = t * per_task;
                let mut units: Vec<A::Unit> = (0..outs.len().div_ceil(w * out_len))
                    .map(|_| A::Unit::fresh())
                    .collect();
                walk.run_in_memory(kernel, first_unit, &mut units, message);
                let mut lens = Vec::with_capacity(w);
                let first = holding.start + (first_unit * w) as u64;
                for (u, (outs, unit)) in outs.chunks_mut(w * out_len).zip(&units).enumerate() {
                    let first = first + (u * w) as u64;
                    lens.clear();
                    lens.extend(
                        (first..first + (outs.len() / out_len) as u64).map(|leaf| lengths.of(leaf)),
                    );
                    kernel.finish_unit(unit, &lens, outs);
                }
            });
        out
    }
}

/// Where a piece's bytes are.
#[derive(Clone, Copy)]
enum PieceBytes<'p> {
    /// In memory.
    Memory(&'p [u8]),
    /// Not read yet: `len` bytes of `input` from `offset`. Each task reads
    /// its own leaves' runs.
    File {
        input: &'p InputFile,
        offset: u64,
        len: usize,
    },
}

impl PieceBytes<'_> {
    fn len(&self) -> usize {
        match self {
            PieceBytes::Memory(bytes) => bytes.len(),
            PieceBytes::File { len, .. } => *len,
        }
    }
}

/// One piece of M, `len` bytes: blocks `first .. end`, the last perhaps
/// short, of which the walk takes those of the leaves `owned`.
struct Walk {
    len: usize,
    first: u64,
    end: u64,
    leaf_count: u64,
    owned: Range<u64>,
    block_size: usize,
}

impl Walk {
    /// One task: the units `task`, the first of which is unit `first_unit`,
    /// absorb their blocks of the piece, whose bytes are `bytes`. Stripe by
    /// stripe, so that the task's reads are sequential and its states stay
    /// cached. From a file, the task reads its run of each stripe (at most
    /// [`READ_RUN_MAX`] bytes at a time) into its worker's buffer.
    fn run<A: Absorb>(
        &self,
        kernel: &A,
        first_unit: usize,
        task: &mut [A::Unit],
        bytes: PieceBytes<'_>,
    ) -> Result<(), HashError> {
        let (input, offset) = match bytes {
            PieceBytes::Memory(piece) => {
                self.run_in_memory(kernel, first_unit, task, piece);
                return Ok(());
            }
            PieceBytes::File { input, offset, .. } => (input, offset),
        };
        let (w, b, l) = (A::WIDTH, self.block_size, self.leaf_count);
        let task_leaf0 = self.owned.start + (first_unit * w) as u64;
        let units_per_read = (READ_RUN_MAX / (w * b)).max(1);
        with_read_buffer(units_per_read.min(task.len()) * w * b, |buffer| {
            let mut stripe = self.first - self.first % l;
            while stripe < self.end {
                for (g, units) in task.chunks_mut(units_per_read).enumerate() {
                    let leaf0 = task_leaf0 + (g * units_per_read * w) as u64;
                    let blocks = self.blocks_of(stripe, leaf0..leaf0 + (units.len() * w) as u64);
                    if blocks.is_empty() {
                        continue;
                    }
                    let bytes = self.byte_range(blocks.clone());
                    let run = &mut buffer[..bytes.len()];
                    input.read_exact_at(run, offset + bytes.start as u64)?;
                    self.stripe(kernel, leaf0, units, stripe, run, blocks.start);
                }
                stripe += l;
            }
            Ok(())
        })
    }

    /// [`run`](Self::run) over the piece's bytes in memory, `piece`.
    fn run_in_memory<A: Absorb>(
        &self,
        kernel: &A,
        first_unit: usize,
        task: &mut [A::Unit],
        piece: &[u8],
    ) {
        let (w, b, l) = (A::WIDTH, self.block_size, self.leaf_count);
        let task_leaf0 = self.owned.start + (first_unit * w) as u64;
        let run = task.len() * w * b;
        let mut stripe = self.first - self.first % l;
        while stripe < self.end {
            let ahead = stripe + PREFETCH_STRIPES * l + task_leaf0;
            if run < PREFETCH_RUN_MAX
                && let Some(at) = ahead.checked_sub(self.first)
            {
                let at = (at as usize).saturating_mul(b);
                let end = at.saturating_add(run).min(piece.len());
                if let Some(bytes) = piece.get(at..end) {
                    prefetch(bytes);
                }
            }
            self.stripe(kernel, task_leaf0, task, stripe, piece, self.first);
            stripe += l;
        }
    }

    /// The blocks of the piece in `stripe` (a multiple of L) that belong
    /// to `leaves` and are owned: one run.
    fn blocks_of(&self, stripe: u64, leaves: Range<u64>) -> Range<u64> {
        let start = (stripe + leaves.start).max(self.first);
        let end = (stripe + leaves.end.min(self.owned.end)).min(self.end);
        start..end.max(start)
    }

    /// The bytes of the piece that hold blocks `blocks` (within `first .. end`).
    fn byte_range(&self, blocks: Range<u64>) -> Range<usize> {
        let at = |block: u64| (((block - self.first) as usize) * self.block_size).min(self.len);
        at(blocks.start)..at(blocks.end)
    }

    /// The units `units`, the first of which starts at leaf `leaf0`, absorb
    /// their blocks of `stripe` from `bytes`, which start at block `base`
    /// and hold every such block of the piece: whole units at once where
    /// the piece holds all of their blocks, leaf by leaf at its edges.
    fn stripe<A: Absorb>(
        &self,
        kernel: &A,
        leaf0: u64,
        units: &mut [A::Unit],
        stripe: u64,
        bytes: &[u8],
        base: u64,
    ) {
        let (w, b) = (A::WIDTH, self.block_size);
        let hi = self.owned.end;
        for (k, unit) in units.iter_mut().enumerate() {
            let leaf0 = leaf0 + (k * w) as u64;
            let i0 = stripe + leaf0;
            if i0 >= self.end {
                break;
            }
            if i0 >= self.first && leaf0 + w as u64 <= hi {
                let at = ((i0 - base) as usize) * b;
                if let Some(blocks) = bytes.get(at..at + w * b) {
                    kernel.absorb_blocks(unit, blocks);
                    continue;
                }
            }
            for lane in 0..w {
                let (leaf, i) = (leaf0 + lane as u64, i0 + lane as u64);
                if leaf >= hi || i >= self.end {
                    break;
                }
                if i >= self.first {
                    let at = ((i - base) as usize) * b;
                    let block = &bytes[at..(at + b).min(bytes.len())];
                    kernel.absorb_leaf(unit, lane, block);
                }
            }
        }
    }

    /// The piece cut at stripe boundaries into slices of about `bytes`
    /// bytes per unit (one stripe at least), in order: each slice's walk
    /// and the range of the piece's bytes it covers.
    fn slices<A: Absorb>(&self, bytes: usize) -> Vec<(Walk, Range<usize>)> {
        let l = self.leaf_count;
        let unit_run = (A::WIDTH * self.block_size) as u64;
        let step = l * (bytes as u64 / unit_run).max(1);
        let mut slices = Vec::new();
        let mut from = self.first;
        while from < self.end {
            let to = (from - from % l).saturating_add(step).min(self.end);
            slices.push(self.blocks(from..to));
            from = to;
        }
        slices
    }

    /// The walk over blocks `range` of the piece (within `first .. end`),
    /// and the piece's bytes that hold them.
    fn blocks(&self, range: Range<u64>) -> (Walk, Range<usize>) {
        let bytes = self.byte_range(range.clone());
        let walk = Walk {
            len: bytes.len(),
            first: range.start,
            end: range.end,
            leaf_count: self.leaf_count,
            owned: self.owned.clone(),
            block_size: self.block_size,
        };
        (walk, bytes)
    }
}

/// The units `units` (the first is unit `first_unit`) over a piece cut into
/// `slices`: each unit takes the slices in order, and each of `threads`
/// workers takes the next slice of the free unit furthest behind, so that
/// none waits for another; a worker that finds every unit held stops.
fn run_in_slices<A: Absorb>(
    slices: &[(Walk, &[u8])],
    kernel: &A,
    first_unit: usize,
    units: &mut [A::Unit],
    threads: usize,
) {
    let chains: Vec<Chain<'_, A::Unit>> = units
        .iter_mut()
        .map(|unit| Chain {
            unit: Mutex::new(unit),
            done: AtomicUsize::new(0),
        })
        .collect();
    let work = || {
        // Neighbouring units share a cache line where their size is no
        // multiple of it (a portable sponge is 208 bytes), and other workers
        // absorb into them at the same time: each slice runs on a copy on
        // this worker's stack, or both cores would write that line at every
        // round of the permutation.
        let mut local = [A::Unit::fresh()];
        while let Some((u, mut unit)) = next_free(&chains, slices.len()) {
            let chain = &chains[u];
            let s = chain.done.load(Ordering::Relaxed);
            std::mem::swap(&mut local[0], &mut **unit);
            let (walk, bytes) = &slices[s];
            walk.run_in_memory(kernel, first_unit + u, &mut local, bytes);
            std::mem::swap(&mut local[0], &mut **unit);
            chain.done.store(s + 1, Ordering::Relaxed);
        }
    };
    rayon::scope(|scope| {
        for _ in 1..threads.min(chains.len()) {
            scope.spawn(|_| work());
        }
        work();
    });
}

/// One unit's slices of a piece: the unit, held by the worker absorbing its
/// next slice, and how many it has absorbed (changed only under the lock).
struct Chain<'u, U> {
    unit: Mutex<&'u mut U>,
    done: AtomicUsize,
}

/// The free unit with slices left that has absorbed the fewest, locked; or
/// `None` when every unit with slices left is held by another worker (or
/// none has any left). A worker that finds none stops: each unit's slices
/// are absorbed one after the other, and every unit with slices left has a
/// worker that takes its next slice or leaves it free for another.
fn next_free<'c, 'u, U>(
    chains: &'c [Chain<'u, U>],
    slices: usize,
) -> Option<(usize, MutexGuard<'c, &'u mut U>)> {
    let mut behind: Vec<(usize, usize)> = chains
        .iter()
        .enumerate()
        .map(|(u, chain)| (chain.done.load(Ordering::Relaxed), u))
        .filter(|&(done, _)| done < slices)
        .collect();
    behind.sort_unstable();
    behind.into_iter().find_map(|(_, u)| {
        // Checked again under the lock: another worker may have absorbed
        // its last slice since. A lock poisoned by a worker that panicked
        // counts as held: the scope re-raises the panic.
        let guard = chains[u].unit.try_lock().ok()?;
        (chains[u].done.load(Ordering::Relaxed) < slices).then_some((u, guard))
    })
}

/// Asks the CPU to bring `bytes` into its caches; a hint, nothing more.
fn prefetch(bytes: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    for line in bytes.chunks(64) {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: a prefetch has no effect on memory and cannot fault; the
        // address is inside `bytes` anyway.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(line.as_ptr().cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = bytes;
}

/// The units (of `width` leaves, unit 0 starting at leaf `owned.start`) that
/// blocks `first .. end` reach: at most two disjoint ranges, the second empty
/// unless the blocks wrap round from leaf L − 1 to leaf 0 without covering
/// every leaf.
fn touched_units(
    first: u64,
    end: u64,
    leaf_count: u64,
    owned: &Range<u64>,
    width: usize,
) -> [Range<usize>; 2] {
    let units = |leaves: Range<u64>| {
        let (start, stop) = (leaves.start.max(owned.start), leaves.end.min(owned.end));
        if start >= stop {
            return 0..0;
        }
        let from = |leaf: u64| (leaf - owned.start) as usize;
        from(start) / width..from(stop).div_ceil(width)
    };
    if end - first >= leaf_count {
        return [units(0..leaf_count), 0..0];
    }
    let start = first % leaf_count;
    let stop = start + (end - first);
    if stop <= leaf_count {
        return [units(start..stop), 0..0];
    }
    let (tail, head) = (units(start..leaf_count), units(0..stop - leaf_count));
    if !head.is_empty() && !tail.is_empty() && head.end > tail.start {
        // Both ends fall in one unit: one range over both, each unit once.
        return [head.start..tail.end, 0..0];
    }
    [tail, head]
}

#[cfg(test)]
mod tests;
