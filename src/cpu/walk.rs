//! The walk over the message, written once for every leaf engine: which
//! block goes to which leaf, in which order, on which thread. An engine only
//! says how a unit of `WIDTH` neighbouring leaves absorbs blocks ([`Absorb`]).
//!
//! States are kept only for leaves that hold at least one block (leaves
//! 0 … min(blocks, L) − 1, which fill in order until the first wrap), so
//! memory and work follow the input's size, not L.

use std::ops::Range;

use rayon::prelude::*;

use crate::params::TreeParams;

/// Leaves per rayon task at most: 1024 states are about 208 KiB, an L2's worth.
const MAX_TASK_LEAVES: usize = 1024;
/// A task whose bytes of a stripe are a run shorter than this asks for its
/// bytes of the stripe `PREFETCH_STRIPES` ahead while it absorbs the current
/// one. With few leaves such runs (1088 bytes at L = 256) lie a stripe apart,
/// too far for the hardware prefetchers to follow: on the 16-core Xeon,
/// 8 GiB at H = 4 went from 14.1 to 16.8 GB/s, H = 5 from 17.6 to 19.6
/// (docs/PERFORMANCE.md). Longer runs the hardware follows by itself.
const PREFETCH_RUN_MAX: usize = 16 << 10;
const PREFETCH_STRIPES: u64 = 2;

/// How one leaf engine absorbs blocks into a unit of `WIDTH` neighbouring leaves.
pub trait Absorb: Send + Sync {
    /// Leaves per unit.
    const WIDTH: usize;
    /// The states of one unit's leaves.
    type Unit: Send + Sync;

    /// A unit whose leaves have absorbed nothing.
    fn new_unit(&self) -> Self::Unit;

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
}

/// Every leaf's state while M is absorbed, piece by piece.
pub struct Leaves<'a, A: Absorb> {
    params: &'a TreeParams,
    pool: &'a rayon::ThreadPool,
    engine: A,
    /// The units of leaves 0 … (at least) min(blocks absorbed, L) − 1.
    units: Vec<A::Unit>,
    /// Bytes of M absorbed so far (a whole number of blocks until the last piece).
    message_len: u64,
}

impl<'a, A: Absorb> Leaves<'a, A> {
    pub fn new(params: &'a TreeParams, pool: &'a rayon::ThreadPool, engine: A) -> Self {
        Leaves {
            params,
            pool,
            engine,
            units: Vec::new(),
            message_len: 0,
        }
    }

    /// Absorbs the next piece of M, which starts on a block boundary; block i
    /// goes to leaf i mod L, in order.
    pub fn absorb(&mut self, piece: &[u8]) {
        let b = self.params.block_size();
        let leaf_count = self.params.leaf_count();
        let first = self.message_len / b as u64;
        let end = first + piece.len().div_ceil(b) as u64;
        self.message_len += piece.len() as u64;
        self.grow((end.min(leaf_count) as usize).div_ceil(A::WIDTH));
        let (engine, units) = (&self.engine, &mut self.units);
        if leaf_count == 1 {
            // All of M is leaf 0's, in order. On a pool thread, not the caller's:
            // workers that just finished spin for a while, and one more busy
            // thread than cores would halve this single sponge's speed.
            self.pool
                .install(|| engine.absorb_leaf(&mut units[0], 0, piece));
            return;
        }
        let walk = Walk {
            piece,
            first,
            end,
            leaf_count,
            block_size: b,
        };
        let ranges = touched_units(first, end, leaf_count, A::WIDTH);
        let touched: usize = ranges.iter().map(|r| r.len()).sum();
        // Several tasks per thread for balance, and few enough leaves per task
        // that their states stay in the core's cache from stripe to stripe.
        let per_task = touched
            .div_ceil(self.pool.current_num_threads() * 4)
            .clamp(1, (MAX_TASK_LEAVES / A::WIDTH).max(1));
        self.pool.install(|| {
            for range in ranges.into_iter().filter(|r| !r.is_empty()) {
                let start = range.start;
                units[range]
                    .par_chunks_mut(per_task)
                    .enumerate()
                    .for_each(|(t, task)| walk.run(engine, start + t * per_task, task));
            }
        });
    }

    /// Makes room for `units` units (never more than L leaves' worth).
    fn grow(&mut self, units: usize) {
        let have = self.units.len();
        if units <= have {
            return;
        }
        // Amortised growth for streams, without reserving past L.
        let most = (self.params.leaf_count() as usize).div_ceil(A::WIDTH);
        let target = units.max(2 * have).min(most);
        self.units.reserve_exact(target - have);
        let engine = &self.engine;
        self.units.resize_with(units, || engine.new_unit());
    }

    /// Pads every leaf that holds a block: their outputs in leaf order,
    /// `params.leaf_output_len()` bytes each (the other leaves are empty).
    pub fn finish(self) -> Vec<u8> {
        let params = self.params;
        let out_len = params.leaf_output_len();
        let blocks = self.message_len.div_ceil(params.block_size() as u64);
        let real = blocks.min(params.leaf_count()) as usize;
        let mut out = vec![0u8; real * out_len];
        let (engine, units) = (&self.engine, &self.units);
        self.pool.install(|| {
            out.par_chunks_mut(A::WIDTH * out_len)
                .zip(units.par_iter())
                .enumerate()
                .with_min_len((64 / A::WIDTH).max(1))
                .for_each(|(u, (outs, unit))| {
                    let first = (u * A::WIDTH) as u64;
                    let lens: Vec<u64> = (first..)
                        .take(outs.len() / out_len)
                        .map(|leaf| leaf_len(params, self.message_len, leaf))
                        .collect();
                    engine.finish_unit(unit, &lens, outs);
                });
        });
        out
    }
}

/// One piece of M: blocks `first .. end`, the last perhaps short.
struct Walk<'p> {
    piece: &'p [u8],
    first: u64,
    end: u64,
    leaf_count: u64,
    block_size: usize,
}

impl Walk<'_> {
    /// One task: the units `task`, the first of which is unit `first_unit`.
    /// Stripe by stripe, so that the task's reads are sequential and its
    /// states stay cached; whole units at once where the piece holds all of
    /// their blocks, leaf by leaf at the piece's edges.
    fn run<A: Absorb>(&self, engine: &A, first_unit: usize, task: &mut [A::Unit]) {
        let (w, b, l) = (A::WIDTH, self.block_size, self.leaf_count);
        let run = task.len() * w * b;
        let mut stripe = self.first - self.first % l;
        while stripe < self.end {
            let ahead = stripe + PREFETCH_STRIPES * l + (first_unit * w) as u64;
            if run < PREFETCH_RUN_MAX
                && let Some(at) = ahead.checked_sub(self.first)
            {
                let at = (at as usize).saturating_mul(b);
                let end = at.saturating_add(run).min(self.piece.len());
                if let Some(bytes) = self.piece.get(at..end) {
                    prefetch(bytes);
                }
            }
            for (k, unit) in task.iter_mut().enumerate() {
                let leaf0 = ((first_unit + k) * w) as u64;
                let i0 = stripe + leaf0;
                if i0 >= self.end {
                    break;
                }
                if i0 >= self.first && leaf0 + w as u64 <= l {
                    let at = ((i0 - self.first) as usize) * b;
                    if let Some(blocks) = self.piece.get(at..at + w * b) {
                        engine.absorb_blocks(unit, blocks);
                        continue;
                    }
                }
                for lane in 0..w {
                    let (leaf, i) = (leaf0 + lane as u64, i0 + lane as u64);
                    if leaf >= l || i >= self.end {
                        break;
                    }
                    if i >= self.first {
                        let at = ((i - self.first) as usize) * b;
                        let block = &self.piece[at..(at + b).min(self.piece.len())];
                        engine.absorb_leaf(unit, lane, block);
                    }
                }
            }
            stripe += l;
        }
    }
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

/// The units (of `width` leaves) that blocks `first .. end` reach: at most two
/// disjoint ranges, the second empty unless the blocks wrap round from leaf
/// L − 1 to leaf 0 without covering every leaf.
fn touched_units(first: u64, end: u64, leaf_count: u64, width: usize) -> [Range<usize>; 2] {
    let units =
        |leaves: Range<u64>| leaves.start as usize / width..(leaves.end as usize).div_ceil(width);
    if end - first >= leaf_count {
        return [units(0..leaf_count), 0..0];
    }
    let start = first % leaf_count;
    let stop = start + (end - first);
    if stop <= leaf_count {
        return [units(start..stop), 0..0];
    }
    let (tail, head) = (units(start..leaf_count), units(0..stop - leaf_count));
    if head.end > tail.start {
        // Both ends fall in one unit: one range, every unit.
        return [units(0..leaf_count), 0..0];
    }
    [tail, head]
}

/// The bytes leaf `leaf` holds of a message of `message_len` bytes: B per
/// block dealt to it, less what the message's last block lacks if that
/// block is the leaf's.
pub fn leaf_len(params: &TreeParams, message_len: u64, leaf: u64) -> u64 {
    let b = params.block_size() as u64;
    let l = params.leaf_count();
    let blocks = message_len.div_ceil(b);
    let own = (blocks + l - 1 - leaf) / l;
    let mut len = own * b;
    if blocks > 0 && (blocks - 1) % l == leaf {
        len -= blocks * b - message_len;
    }
    len
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn touched_units_wrap_round() {
        assert_eq!(touched_units(0, 3, 8, 1), [0..3, 0..0]);
        assert_eq!(touched_units(6, 9, 8, 1), [6..8, 0..1]);
        assert_eq!(touched_units(13, 16, 8, 1), [5..8, 0..0]);
        assert_eq!(touched_units(5, 13, 8, 1), [0..8, 0..0]);
        assert_eq!(touched_units(5, 105, 8, 1), [0..8, 0..0]);
        // Units of four leaves; L = 10 ends in a half unit.
        assert_eq!(touched_units(0, 3, 10, 4), [0..1, 0..0]);
        assert_eq!(touched_units(5, 9, 10, 4), [1..3, 0..0]);
        assert_eq!(touched_units(9, 13, 10, 4), [2..3, 0..1]);
        // The wrap ends in the unit where it started: every unit, once.
        assert_eq!(touched_units(6, 15, 8, 4), [0..2, 0..0]);
        assert_eq!(touched_units(17, 25, 9, 4), [2..3, 0..2]);
    }

    #[test]
    fn leaf_lengths_add_up_to_the_message() {
        let p = TreeParams::with_options(crate::Algorithm::Sha3_256, 1, 5, Some(8), vec![], None)
            .unwrap();
        for len in [0u64, 1, 7, 8, 9, 39, 40, 41, 123] {
            let lens: Vec<u64> = (0..5).map(|j| leaf_len(&p, len, j)).collect();
            assert_eq!(lens.iter().sum::<u64>(), len, "{len}: {lens:?}");
        }
        assert_eq!(leaf_len(&p, 41, 0), 9);
        assert_eq!(leaf_len(&p, 41, 1), 8);
    }
}
