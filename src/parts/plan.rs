//! Which leaves each part owns, the whole subtrees that its values stand
//! for, and what it reads.

use std::ops::Range;

use crate::params::TreeParams;
use crate::tree::Dealing;

/// The shortest run per stripe that a part should read. Each run is one
/// request to the file system, and a parallel file system serves requests
/// of its stripe size (1 MiB by default on Lustre and BeeGFS) or more at
/// full speed; shorter ones pay a round trip each for less data. Not
/// measured on such a file system yet
/// (docs/decisions/0018-parts-runs-of-1-mib.md).
pub const MIN_RUN_BYTES: u64 = 1 << 20;

/// The leaves of part `index` of `count`: [⌊I·L/N⌋, ⌊(I+1)·L/N⌋). Parts
/// differ by at most one leaf, so each reads 1/N of the file to within one
/// block per stripe; with more parts than leaves some own none.
pub fn part_leaves(leaf_count: u64, count: u64, index: u64) -> Range<u64> {
    debug_assert!(index < count);
    let at = |i: u64| (u128::from(i) * u128::from(leaf_count) / u128::from(count)) as u64;
    at(index)..at(index + 1)
}

/// Consecutive whole subtrees of one size: `count` nodes of level `level`
/// from node `first` (a node of level h covers D^(H−h) leaves; level H is
/// the leaves, level 0 the root).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Subtrees {
    pub level: u32,
    pub first: u64,
    pub count: u64,
}

impl Subtrees {
    /// The leaves under them.
    pub(super) fn leaves(&self, params: &TreeParams) -> Range<u64> {
        let size = leaves_per_node(params, self.level);
        self.first * size..(self.first + self.count) * size
    }
}

/// D^(H − level): the leaves under one node of `level`.
pub(crate) fn leaves_per_node(params: &TreeParams, level: u32) -> u64 {
    // At most L ≤ 2^24: no overflow.
    params.degree().pow(params.height() - level)
}

/// The whole subtrees that tile `leaves`, left to right: at each step the
/// largest subtree that starts there and ends within the range. Neighbours
/// of one size are one [`Subtrees`]. There are at most 2·(D − 1)·H + 1
/// subtrees: sizes grow from the range's start, then shrink to its end.
pub(crate) fn subtrees(params: &TreeParams, leaves: Range<u64>) -> Vec<Subtrees> {
    let (height, degree) = (params.height(), params.degree());
    let mut tiles: Vec<Subtrees> = Vec::new();
    let mut at = leaves.start;
    while at < leaves.end {
        // The largest size D^k that `at` is a multiple of and that fits.
        let (mut k, mut size) = (0, 1u64);
        while k < height {
            let next = size * degree;
            if !at.is_multiple_of(next) || next > leaves.end - at {
                break;
            }
            (k, size) = (k + 1, next);
        }
        // As many of that size as fit before the end, and before `at`
        // reaches a multiple of the next size (where a larger one may fit).
        let mut count = (leaves.end - at) / size;
        if k < height {
            let next = size * degree;
            count = count.min((next - at % next) / size);
        }
        let level = height - k;
        let first = at / size;
        match tiles.last_mut() {
            Some(last) if last.level == level && last.first + last.count == first => {
                last.count += count
            }
            _ => tiles.push(Subtrees {
                level,
                first,
                count,
            }),
        }
        at += count * size;
    }
    tiles
}

/// The nodes of `level` whose subtree holds a block when the first
/// `holding` leaves do (leaves fill in order, so these are the first
/// ones). The root always counts: a part that covers the whole tree stores
/// the digest, even that of an empty message.
pub(crate) fn nodes_holding(params: &TreeParams, level: u32, holding: u64) -> u64 {
    if level == 0 {
        return 1;
    }
    holding.div_ceil(leaves_per_node(params, level))
}

/// The values that `tiles` store: those of their nodes that hold a block.
pub(crate) fn stored(params: &TreeParams, tiles: &Subtrees, holding: u64) -> u64 {
    let end = tiles.first + tiles.count;
    nodes_holding(params, tiles.level, holding).clamp(tiles.first, end) - tiles.first
}

/// The bytes of a value of `level`: the digest's n at the root (and for
/// the one leaf of H = 0), the chaining value's c below.
pub(crate) fn value_len(params: &TreeParams, level: u32) -> usize {
    if level == 0 {
        params.output_len()
    } else {
        params.algorithm().chaining_len()
    }
}

/// What one part of a split owns and reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartPlan {
    /// I, its index in the split.
    pub index: u64,
    /// The leaves it owns.
    pub leaves: Range<u64>,
    /// Its run in each whole stripe, in bytes: (b − a)·B.
    pub run_len: u64,
    /// The bytes of the file it reads, where the file's size is known.
    pub read_len: Option<u64>,
    /// The values it stores where every leaf holds a block: its whole
    /// subtrees' roots (fewer for a short file).
    pub values: u64,
}

/// The plan of a file of `file_len` bytes (if known) split into `count`
/// parts under `params`, part by part.
pub fn plan(
    params: &TreeParams,
    count: u64,
    file_len: Option<u64>,
) -> impl Iterator<Item = PartPlan> + '_ {
    let leaf_count = params.leaf_count();
    (0..count).map(move |index| {
        let leaves = part_leaves(leaf_count, count, index);
        let values = subtrees(params, leaves.clone())
            .iter()
            .map(|t| t.count)
            .sum();
        PartPlan {
            index,
            run_len: (leaves.end - leaves.start) * params.block_size() as u64,
            read_len: file_len.map(|len| bytes_read(params, &leaves, len)),
            values,
            leaves,
        }
    })
}

/// The bytes of M = P ‖ F that hold prefix bytes, completed with the
/// file's first bytes to a whole block (the head the input path copies):
/// its length, and how many of its bytes are the file's.
pub(crate) fn head(params: &TreeParams, file_len: u64) -> (u64, u64) {
    let prefix = params.prefix().len() as u64;
    if prefix == 0 {
        return (0, 0);
    }
    let whole = prefix.next_multiple_of(params.block_size() as u64);
    let from_file = (whole - prefix).min(file_len);
    (prefix + from_file, from_file)
}

/// The bytes of a file of `file_len` bytes that the part owning `leaves`
/// reads: its runs past the head, and the head's file bytes (fewer than B)
/// where one of the head's blocks is its own.
pub(crate) fn bytes_read(params: &TreeParams, leaves: &Range<u64>, file_len: u64) -> u64 {
    let (head_len, head_from_file) = head(params, file_len);
    let message_len = params.prefix().len() as u64 + file_len;
    let dealing = Dealing::of(params);
    let past_head = dealing.packed_len(leaves, message_len) - dealing.packed_len(leaves, head_len);
    let head = if dealing.packed_len(leaves, head_len) > 0 {
        head_from_file
    } else {
        0
    };
    past_head + head
}

/// The most parts whose runs are all at least [`MIN_RUN_BYTES`] long under
/// `params` (the smallest part owns ⌊L/N⌋ leaves). One part reads the file
/// straight through, whatever its stripes.
fn max_parts_with_long_runs(params: &TreeParams) -> u64 {
    let leaves_needed = MIN_RUN_BYTES.div_ceil(params.block_size() as u64);
    (params.leaf_count() / leaves_needed).max(1)
}

/// Whether `count` parts under `params` read runs shorter than
/// [`MIN_RUN_BYTES`].
fn runs_are_short(params: &TreeParams, count: u64) -> bool {
    count > max_parts_with_long_runs(params)
}

/// Parameters like `params` under which `count` parts read runs of at
/// least [`MIN_RUN_BYTES`]: the smallest larger height (at most 2^24
/// leaves), and the smallest block size that is a multiple of the rate
/// (which keeps the SIMD lane kernels). Either is `None` where none does.
/// Both change the digest.
fn longer_runs(params: &TreeParams, count: u64) -> (Option<u32>, Option<usize>) {
    let runs_long = |leaves: u64, block: u64| (leaves / count.max(1)) * block >= MIN_RUN_BYTES;
    let block = params.block_size() as u64;
    let degree = params.degree();
    let mut height = None;
    let (mut h, mut leaves) = (params.height(), params.leaf_count());
    while let Some(more) = leaves
        .checked_mul(degree)
        .filter(|&l| l <= TreeParams::MAX_LEAVES)
    {
        (h, leaves) = (h + 1, more);
        if runs_long(leaves, block) {
            height = Some(h);
            break;
        }
    }
    let per_part = params.leaf_count() / count.max(1);
    let rate = params.algorithm().rate() as u64;
    let block_size = (per_part > 0)
        .then(|| MIN_RUN_BYTES.div_ceil(per_part).next_multiple_of(rate))
        .filter(|&b| b <= TreeParams::MAX_BLOCK_SIZE as u64 && b > block)
        .map(|b| b as usize);
    (height, block_size)
}

/// A split whose parts read runs shorter than [`MIN_RUN_BYTES`], and what
/// avoids it: the facts of the warning a front end words in its own
/// spelling of the options ([`short_runs`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShortRuns {
    /// Bytes per stripe of the smallest part's run.
    pub run: u64,
    /// The most parts whose runs are long (`max_parts_with_long_runs`).
    pub most_parts: u64,
    /// A larger height that makes the runs long, if one does
    /// (`longer_runs`).
    pub height: Option<u32>,
    /// A larger block size that makes the runs long, if one does.
    pub block_size: Option<usize>,
}

/// The short runs of `count` parts under `params`, or `None` where they
/// are long enough.
pub fn short_runs(params: &TreeParams, count: u64) -> Option<ShortRuns> {
    if !runs_are_short(params, count) {
        return None;
    }
    let (height, block_size) = longer_runs(params, count);
    Some(ShortRuns {
        run: params.leaf_count() / count * params.block_size() as u64,
        most_parts: max_parts_with_long_runs(params),
        height,
        block_size,
    })
}

impl ShortRuns {
    /// The ways out, each spelled by the caller (`at_most` given the most
    /// parts, where more than one), as `a`, `a or b`, `a, b or c`.
    pub fn ways(
        &self,
        at_most: impl Fn(u64) -> String,
        height: impl Fn(u32) -> String,
        block_size: impl Fn(usize) -> String,
    ) -> String {
        let mut ways = vec![match self.most_parts {
            0 | 1 => "one part".to_string(),
            most => at_most(most),
        }];
        ways.extend(self.height.map(height));
        ways.extend(self.block_size.map(block_size));
        match ways.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => ways.concat(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Algorithm;

    fn params(height: u32, degree: u64) -> TreeParams {
        TreeParams::new(Algorithm::Sha3_256, height, degree).unwrap()
    }

    #[test]
    fn parts_tile_the_leaves_evenly() {
        for (leaves, count) in [(1, 1), (1, 5), (4, 3), (16, 16), (65536, 7), (8, 100)] {
            let mut end = 0;
            for index in 0..count {
                let range = part_leaves(leaves, count, index);
                assert_eq!(range.start, end);
                let len = range.end - range.start;
                assert!(len == leaves / count || len == leaves / count + 1);
                end = range.end;
            }
            assert_eq!(end, leaves);
        }
    }

    #[test]
    fn subtrees_are_the_largest_that_fit() {
        let p = params(3, 4); // 64 leaves
        let tiles = |a, b| {
            subtrees(&p, a..b)
                .iter()
                .map(|t| (t.level, t.first, t.count))
                .collect::<Vec<_>>()
        };
        assert_eq!(tiles(0, 64), vec![(0, 0, 1)]);
        assert_eq!(tiles(0, 32), vec![(1, 0, 2)]);
        assert_eq!(tiles(1, 10), vec![(3, 1, 3), (2, 1, 1), (3, 8, 2)]);
        assert_eq!(tiles(1, 7), vec![(3, 1, 6)]);
        assert_eq!(tiles(21, 64), vec![(3, 21, 3), (2, 6, 2), (1, 2, 2)]);
        assert_eq!(tiles(5, 5), vec![]);
        // Every tiling covers its range exactly, whatever the degree.
        for (h, d) in [(4, 2), (3, 3), (2, 5), (1, 7), (0, 2)] {
            let p = params(h, d);
            let l = p.leaf_count();
            for a in 0..=l {
                for b in a..=l {
                    let mut at = a;
                    let list = subtrees(&p, a..b);
                    assert!(list.len() as u64 <= 2 * (d - 1) * u64::from(h) + 1);
                    for t in list {
                        let leaves = t.leaves(&p);
                        assert_eq!(leaves.start, at, "H={h} D={d} {a}..{b}");
                        at = leaves.end;
                    }
                    assert_eq!(at, b);
                }
            }
        }
    }

    #[test]
    fn runs_and_suggestions() {
        let p = TreeParams::default(); // 65536 leaves of 136 bytes
        // ⌊65536 / 7711⌋ = 8 parts keep runs of 7711 leaves (≥ 1 MiB).
        assert_eq!(max_parts_with_long_runs(&p), 8);
        assert!(!runs_are_short(&p, 8));
        assert!(runs_are_short(&p, 16));
        let (height, block) = longer_runs(&p, 16);
        assert_eq!(height, Some(9));
        // 1 MiB / 4096 leaves = 256 bytes, rounded up to a multiple of 136.
        assert_eq!(block, Some(272));
        let q = params(4, 4);
        assert_eq!(max_parts_with_long_runs(&q), 1);
        let plans: Vec<_> = plan(&p, 16, Some(10 * p.stripe_len())).collect();
        assert_eq!(plans[3].leaves, 12288..16384);
        assert_eq!(plans[3].run_len, 4096 * 136);
        assert_eq!(plans[3].read_len, Some(10 * 4096 * 136));
        assert_eq!(plans[3].values, 1);
    }

    #[test]
    fn the_head_is_read_by_the_parts_that_own_one_of_its_blocks() {
        let p = TreeParams::with_options(Algorithm::Sha3_256, 2, 4, Some(64), vec![1; 100], None)
            .unwrap();
        // M = 100 prefix bytes + 1000 file bytes: 18 blocks of 64, the
        // head is blocks 0 and 1 (28 file bytes in it).
        assert_eq!(head(&p, 1000), (128, 28));
        // Leaves 0 and 1 own a head block each, so both read the head's
        // file bytes; leaf 0 also owns block 16, leaf 1 the last block
        // (1100 − 17·64 = 12 bytes), leaf 2 block 2 alone.
        assert_eq!(bytes_read(&p, &(0..1), 1000), 28 + 64);
        assert_eq!(bytes_read(&p, &(1..2), 1000), 28 + 12);
        assert_eq!(bytes_read(&p, &(2..3), 1000), 64);
        assert_eq!(bytes_read(&p, &(2..16), 1000), 1000 - 28 - 64 - 12);
        let total: u64 = (0..16).map(|j| bytes_read(&p, &(j..j + 1), 1000)).sum();
        assert_eq!(total, 1000 + 28);
    }
}
