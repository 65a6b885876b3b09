//! From the leaves' chaining values up to the root. A level stores only its
//! nodes whose subtree holds a block (they come first: leaves fill in order);
//! every later node of the level is the level's empty-subtree value, which
//! depends only on the height and the function, and is computed once. So the
//! work is that of the real nodes plus one node per level, whatever L is.

use super::workers::Workers;
use crate::params::TreeParams;
use crate::sponge::Sponge;

/// Copies of an empty-subtree value absorbed per call at most.
const EMPTY_BATCH: usize = 1024;

/// The root digest (`params.output_len()` bytes, H ≥ 1) from the outputs of
/// the leaves that hold a block, in leaf order.
pub fn reduce_levels<S: Sponge>(
    params: &TreeParams,
    workers: Workers<'_>,
    mut level: Vec<u8>,
) -> Vec<u8> {
    debug_assert!(params.height() > 0);
    let c = params.algorithm().chaining_len();
    let d = params.degree() as usize;
    // V_H of an empty leaf: A_c of nothing.
    let mut empty = vec![0u8; c];
    S::hash_into(&[], &mut empty);
    // Tasks of at least 64 KiB of children.
    let min_nodes = (1usize << 16).div_ceil(d * c);
    for _ in 1..params.height() {
        let mut parents = vec![0u8; (level.len() / c).div_ceil(d) * c];
        workers.for_each_pair(
            (&mut parents, c),
            (&level, d * c),
            min_nodes,
            |_, out, children| hash_node::<S>(children, &empty, d, out),
        );
        let mut parent_of_empties = vec![0u8; c];
        hash_node::<S>(&[], &empty, d, &mut parent_of_empties);
        (level, empty) = (parents, parent_of_empties);
    }
    let mut root = vec![0u8; params.output_len()];
    hash_node::<S>(&level, &empty, d, &mut root);
    root
}

/// A node whose first children are `children` (whole values) and whose
/// remaining children, up to `degree`, are all `empty`.
fn hash_node<S: Sponge>(children: &[u8], empty: &[u8], degree: usize, out: &mut [u8]) {
    let mut sponge = S::default();
    sponge.absorb(children);
    let mut missing = degree - children.len() / empty.len();
    if missing > 0 {
        let copies = empty.repeat(missing.min(EMPTY_BATCH));
        while missing > 0 {
            let n = missing.min(EMPTY_BATCH);
            sponge.absorb(&copies[..n * empty.len()]);
            missing -= n;
        }
    }
    sponge.squeeze_into(out);
}
