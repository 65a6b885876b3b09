//! The tree above the leaves, for parts and joins: a run of nodes of one
//! level to their parents, and the value of a subtree that holds no block.
//! Runs are whole subtrees (they start and end on multiples of D), and of
//! their nodes only those that hold a block are given: they come first,
//! as leaves fill in order, and the rest are the level's empty value.

use std::sync::OnceLock;

use rayon::prelude::*;

use super::plan::value_len;
use crate::cpu::reduce::hash_node;
use crate::params::TreeParams;
use crate::sponge::{Sponge, with_sponge};

/// Children's bytes per parallel task, at least.
const TASK_BYTES: usize = 64 << 10;

/// Hashes parents below the root whose D children are all given (D·c
/// bytes each, back to back) into c-byte values.
pub(crate) type WholeNodes<'e> = &'e (dyn Fn(&[u8], &mut [u8]) + Sync);

/// The nodes of one tree shape (the prefix plays no part above the leaves).
pub(crate) struct Nodes<'p> {
    params: &'p TreeParams,
    /// The empty value of each level, 0 ..= H, computed on first use
    /// (at D = 2^24 one costs a gigabyte of hashing).
    empty: Vec<OnceLock<Vec<u8>>>,
    /// A faster way to hash whole parents (the CPU's parent levels, several
    /// nodes per permutation), else one sponge per node.
    whole: Option<WholeNodes<'p>>,
}

impl<'p> Nodes<'p> {
    pub(super) fn new(params: &'p TreeParams) -> Self {
        Nodes {
            params,
            empty: (0..=params.height()).map(|_| OnceLock::new()).collect(),
            whole: None,
        }
    }

    /// The same, whole parents hashed by `whole`.
    pub(super) fn with_whole_nodes(params: &'p TreeParams, whole: WholeNodes<'p>) -> Self {
        Nodes {
            whole: Some(whole),
            ..Nodes::new(params)
        }
    }

    /// The value of a subtree of `level` that holds no block: a leaf's is
    /// A_c of nothing (A_n at H = 0), a parent's the node of D such values.
    pub(super) fn empty(&self, level: u32) -> &[u8] {
        self.empty[level as usize].get_or_init(|| {
            let mut out = vec![0u8; value_len(self.params, level)];
            if level == self.params.height() {
                with_sponge!(self.params.algorithm(), S => S::hash_into(&[], &mut out));
            } else {
                let below = self.empty(level + 1);
                self.node(&[], below, &mut out);
            }
            out
        })
    }

    /// The parents of a run of `len` nodes of `level` ≥ 1 (a whole number of
    /// parents' worth) whose first ones, those that hold a block, have the
    /// values `children`: the values of the parents that hold a block. The
    /// root, the parent of the whole of level 1, is always given.
    pub(super) fn parents(&self, level: u32, len: u64, children: &[u8]) -> Vec<u8> {
        debug_assert!(level >= 1 && len.is_multiple_of(self.params.degree()));
        let degree = self.params.degree() as usize;
        let child_len = value_len(self.params, level);
        let out_len = value_len(self.params, level - 1);
        let holding = children.len() / child_len;
        let parents = if level == 1 {
            1
        } else {
            holding.div_ceil(degree)
        };
        // The last parent may lack children that hold a block.
        let empty = if parents * degree > holding {
            self.empty(level)
        } else {
            &[]
        };
        let mut out = vec![0u8; parents * out_len];
        let group = degree * child_len;
        // Below the root, the parents whose children are all given.
        let whole = if level > 1 { holding / degree } else { 0 };
        let (done, rest) = out.split_at_mut(whole * out_len);
        let (whole_children, rest_children) = children.split_at(whole * group);
        match self.whole {
            Some(hash) if whole > 0 => hash(whole_children, done),
            _ => {
                let min_parents = TASK_BYTES.div_ceil(group);
                done.par_chunks_mut(out_len)
                    .zip(whole_children.par_chunks(group))
                    .with_min_len(min_parents)
                    .for_each(|(parent, children)| self.node(children, &[], parent));
            }
        }
        // The last parent, whose children end with empty subtrees, or the root.
        for (parent, children) in rest.chunks_mut(out_len).zip(
            rest_children
                .chunks(group)
                .chain(std::iter::repeat(&[][..])),
        ) {
            self.node(children, empty, parent);
        }
        out
    }

    /// A run of whole subtrees of `len` nodes at `level`, given as the
    /// values of those that hold a block, as it is at level `to`.
    pub(super) fn climb(
        &self,
        mut level: u32,
        mut len: u64,
        mut values: Vec<u8>,
        to: u32,
    ) -> Vec<u8> {
        while level > to {
            values = self.parents(level, len, &values);
            len /= self.params.degree();
            level -= 1;
        }
        values
    }

    /// The node whose first children are `children` (whole values) and
    /// whose other children, up to D, are `empty`: `out.len()` bytes.
    fn node(&self, children: &[u8], empty: &[u8], out: &mut [u8]) {
        let degree = self.params.degree() as usize;
        let child_len = self.params.algorithm().chaining_len();
        with_sponge!(self.params.algorithm(), S => {
            hash_node::<S>(children, empty, child_len, degree, out)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Algorithm;
    use crate::test_reference::node;
    use treehash_reference::node_function;

    #[test]
    fn empty_values_follow_the_spec() {
        for (h, d, alg) in [(2, 3, Algorithm::Sha3_224), (0, 4, Algorithm::Shake256)] {
            let p = TreeParams::new(alg, h, d).unwrap();
            let nodes = Nodes::new(&p);
            let (a, c) = (node(alg), alg.chaining_len());
            let n = p.output_len();
            if h == 0 {
                assert_eq!(nodes.empty(0), node_function(a, &[], n));
                continue;
            }
            let leaf = node_function(a, &[], c);
            assert_eq!(nodes.empty(h), leaf);
            let parent = node_function(a, &leaf.repeat(d as usize), c);
            assert_eq!(nodes.empty(h - 1), parent);
            let root = node_function(a, &parent.repeat(d as usize), n);
            assert_eq!(nodes.empty(0), root);
        }
    }
}
