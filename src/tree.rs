//! LI's leaf level (docs/SPEC.md, "The digest"): M is cut into blocks of B
//! bytes, and block i goes to leaf i mod L. Everything that follows from
//! that rule lives here, for every engine: which leaves hold a block, how
//! many bytes each leaf holds, which bytes of a piece are the blocks of a
//! range of leaves.
//!
//! The kernels (kernels/treehash.cu, few_leaves.cu) follow the rule too, but
//! do none of this arithmetic: the host gives each launch the leaf of its
//! chunk's first block ([`Dealing::leaf_of_block`]) and the leaves' lengths
//! ([`LeafLengths`]), computed here.

use std::ops::Range;

use crate::params::TreeParams;

/// How the blocks of a message are dealt to the leaves: blocks of B bytes,
/// in turn to leaf 0, 1, …, L − 1, then to leaf 0 again.
///
/// The blocks of a range of leaves, packed one stripe after the other, are
/// dealt the same way to a tree of that many leaves: leaf lo + j is leaf j
/// there, with the same blocks and the same short last block. A GPU that
/// owns some of the leaves absorbs that packed message
/// ([`packed_len`](Dealing::packed_len), [`owned_runs`](Dealing::owned_runs)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Dealing {
    block_size: u64,
    leaf_count: u64,
}

impl Dealing {
    /// The dealing of `params`' tree.
    pub(crate) fn of(params: &TreeParams) -> Dealing {
        Dealing::new(params.block_size() as u64, params.leaf_count())
    }

    /// Blocks of `block_size` bytes dealt to `leaf_count` leaves (both at
    /// least 1; zero leaves are taken as one).
    pub(crate) fn new(block_size: u64, leaf_count: u64) -> Dealing {
        debug_assert!(block_size > 0, "blocks of no bytes");
        Dealing {
            block_size,
            leaf_count: leaf_count.max(1),
        }
    }

    pub(crate) fn block_size(self) -> u64 {
        self.block_size
    }

    pub(crate) fn leaf_count(self) -> u64 {
        self.leaf_count
    }

    /// The blocks in the first `message_len` bytes of M, the last perhaps
    /// short.
    pub(crate) fn blocks(self, message_len: u64) -> u64 {
        message_len.div_ceil(self.block_size)
    }

    /// The leaf that block `block` of M goes to.
    pub(crate) fn leaf_of_block(self, block: u64) -> u64 {
        block % self.leaf_count
    }

    /// The number of leaves that hold at least one of the first `blocks`
    /// blocks: leaves fill in order, so they are the first ones.
    pub(crate) fn leaves_holding(self, blocks: u64) -> u64 {
        blocks.min(self.leaf_count)
    }

    /// The number of leaves that hold at least one block once
    /// `message_len` bytes of M are dealt (the first ones).
    pub(crate) fn leaves_with_blocks(self, message_len: u64) -> u64 {
        self.leaves_holding(self.blocks(message_len))
    }

    /// The bytes each leaf holds once `message_len` bytes of M are dealt.
    pub(crate) fn leaf_lengths(self, message_len: u64) -> LeafLengths {
        let (b, l) = (self.block_size, self.leaf_count);
        let blocks = self.blocks(message_len);
        let Some(last_block) = blocks.checked_sub(1) else {
            return LeafLengths::default();
        };
        // Whole stripes before the last block's stripe: every leaf has one
        // block in each; the leaves before the last block's have one more.
        let stripes = last_block / l;
        LeafLengths {
            last: self.leaf_of_block(last_block),
            before: (stripes + 1) * b,
            at_last: stripes * b + (message_len - last_block * b),
            after: stripes * b,
        }
    }

    /// The bytes of M that are blocks of `leaves` once `message_len` bytes
    /// of M are dealt: the length of their packed message.
    pub(crate) fn packed_len(self, leaves: &Range<u64>, message_len: u64) -> u64 {
        self.leaf_lengths(message_len).sum(leaves)
    }

    /// The byte ranges of a piece of `len` bytes, starting `message_len`
    /// bytes into M (a whole number of blocks), that hold blocks of
    /// `leaves`: one run per stripe it crosses, in order.
    pub(crate) fn owned_runs(
        self,
        leaves: &Range<u64>,
        message_len: u64,
        len: usize,
    ) -> Vec<Range<usize>> {
        let (b, l) = (self.block_size, self.leaf_count);
        let first = message_len / b;
        let end = first + (len as u64).div_ceil(b);
        let mut runs = Vec::new();
        let mut stripe = first - self.leaf_of_block(first);
        while stripe < end {
            let from = (stripe + leaves.start).max(first);
            let to = (stripe + leaves.end).min(end);
            if from < to {
                let byte = |block: u64| (((block - first) * b) as usize).min(len);
                runs.push(byte(from)..byte(to));
            }
            stripe += l;
        }
        runs
    }
}

/// The bytes each leaf holds at some point of M, in the form the kernels
/// take it too (`struct LeafLengths` in kernels/treehash.cu, the same
/// layout): leaf j holds `before` bytes for j < `last`, `at_last` for
/// j = `last` (the leaf of M's last block so far, which may be short), and
/// `after` for j > `last`. All zero while M is empty.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct LeafLengths {
    pub(crate) last: u64,
    pub(crate) before: u64,
    pub(crate) at_last: u64,
    pub(crate) after: u64,
}

impl LeafLengths {
    /// The bytes leaf `leaf` holds.
    pub(crate) fn of(&self, leaf: u64) -> u64 {
        match leaf.cmp(&self.last) {
            std::cmp::Ordering::Less => self.before,
            std::cmp::Ordering::Equal => self.at_last,
            std::cmp::Ordering::Greater => self.after,
        }
    }

    /// The bytes the leaves `leaves` hold together.
    pub(crate) fn sum(&self, leaves: &Range<u64>) -> u64 {
        let below = |to: u64| to.clamp(leaves.start, leaves.end) - leaves.start;
        let before = below(self.last);
        let through_last = below(self.last + 1);
        let all = leaves.end.saturating_sub(leaves.start);
        before * self.before
            + (through_last - before) * self.at_last
            + (all - through_last) * self.after
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Algorithm;

    /// B = 8, L = 5: small enough to check against the definition byte by
    /// byte.
    fn small() -> Dealing {
        let p = TreeParams::with_options(Algorithm::Sha3_256, 1, 5, Some(8), vec![], None).unwrap();
        Dealing::of(&p)
    }

    /// The leaf each byte of a message of `len` bytes goes to, by the spec's
    /// definition (block i = byte / B, leaf i mod L).
    fn leaf_of_byte(dealing: Dealing, byte: u64) -> u64 {
        byte / dealing.block_size() % dealing.leaf_count()
    }

    #[test]
    fn leaf_lengths_follow_the_definition() {
        let d = small();
        for len in [0u64, 1, 7, 8, 9, 39, 40, 41, 48, 83, 123, 200] {
            let lengths = d.leaf_lengths(len);
            let mut want = [0u64; 5];
            for byte in 0..len {
                want[leaf_of_byte(d, byte) as usize] += 1;
            }
            for leaf in 0..5 {
                assert_eq!(lengths.of(leaf), want[leaf as usize], "{len}: leaf {leaf}");
            }
            let holding = want.iter().filter(|&&n| n > 0).count() as u64;
            assert_eq!(d.leaves_with_blocks(len), holding, "{len}");
        }
        assert_eq!(d.leaf_lengths(41).of(0), 9);
        assert_eq!(d.leaf_lengths(41).of(1), 8);
    }

    /// Packing, checked against the definition: the owned blocks of M in
    /// order, one run per stripe, the packed message's length their sum.
    #[test]
    fn runs_and_packed_lengths_follow_the_blocks() {
        let d = small();
        for message in [0u64, 1, 8, 39, 40, 41, 83, 200] {
            for (lo, hi) in [(0, 5), (0, 2), (2, 5), (1, 4), (4, 5), (3, 3), (0, 1)] {
                let leaves = lo..hi;
                // Bytes of M that are the leaves', by definition.
                let want: Vec<u64> = (0..message)
                    .filter(|&i| leaves.contains(&leaf_of_byte(d, i)))
                    .collect();
                assert_eq!(d.packed_len(&leaves, message), want.len() as u64);
                // The same through pieces of 16 bytes, any offset.
                let mut got = Vec::new();
                let mut at = 0;
                while at < message {
                    let len = (message - at).min(16) as usize;
                    for r in d.owned_runs(&leaves, at, len) {
                        got.extend((r.start as u64 + at)..(r.end as u64 + at));
                    }
                    at += len as u64;
                }
                assert_eq!(got, want, "M of {message}, leaves {leaves:?}");
            }
        }
    }

    /// A range's packed message is the message of an LI tree of that many
    /// leaves: its leaves' lengths are those of the range's leaves in M.
    #[test]
    fn a_packed_message_is_dealt_like_a_smaller_tree() {
        let d = small();
        for message in [0u64, 1, 8, 39, 40, 41, 83, 200] {
            for (lo, hi) in [(0, 5), (0, 2), (2, 5), (1, 4), (4, 5), (0, 1)] {
                let packed = Dealing::new(d.block_size(), hi - lo);
                let in_packed = packed.leaf_lengths(d.packed_len(&(lo..hi), message));
                let in_m = d.leaf_lengths(message);
                for j in 0..hi - lo {
                    assert_eq!(
                        in_packed.of(j),
                        in_m.of(lo + j),
                        "M of {message}, leaves {lo}..{hi}, leaf {j}"
                    );
                }
            }
        }
    }
}
