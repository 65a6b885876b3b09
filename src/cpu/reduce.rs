//! From the leaves' chaining values up to the root. A level stores only its
//! nodes whose subtree holds a block (they come first: leaves fill in order);
//! every later node of the level is the level's empty-subtree value, which
//! depends only on the height and the function, and is computed once. So the
//! work is that of the real nodes plus one node per level, whatever L is.
//!
//! Every node of a level hashes D·c bytes, so neighbouring nodes run through
//! one leaf kernel's unit side by side: W parents per permutation on the lane
//! kernels. Hashed one node at a time, the parent levels of a large tree
//! cost as much as absorbing its leaves
//! (docs/decisions/0010-leaf-states-in-one-mapping.md).

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use super::units::FreshIsZero;
use super::walk::Absorb;
use super::workers::Workers;
use crate::params::{Algorithm, TreeParams};
use crate::sponge::Sponge;

/// Copies of an empty-subtree value absorbed per call at most.
const EMPTY_BATCH: usize = 1024;
/// Bytes of children one task hashes at least.
const TASK_BYTES: usize = 64 << 10;

/// The root digest (`params.output_len()` bytes, H ≥ 1) from the outputs of
/// the leaves that hold a block, in leaf order. `nodes` hashes the parents
/// below the root, `WIDTH` at a time, from blocks of the rate; `S` the root
/// and each level's last parent, whose children end with empty subtrees.
pub(crate) fn reduce_levels<S: Sponge, A: Absorb>(
    params: &TreeParams,
    workers: Workers<'_>,
    nodes: &A,
    mut level: Vec<u8>,
) -> Vec<u8> {
    debug_assert!(params.height() > 0);
    let c = params.algorithm().chaining_len();
    let d = params.degree() as usize;
    let empties = empty_subtrees::<S>(d, params.height());
    let node_len = d * c;
    for empty in &empties[..empties.len() - 1] {
        let full = level.len() / node_len;
        let mut parents = vec![0u8; (level.len() / c).div_ceil(d) * c];
        let (whole, last) = parents.split_at_mut(full * c);
        whole_nodes(params, workers, nodes, &level[..full * node_len], whole);
        if !last.is_empty() {
            hash_node::<S>(&level[full * node_len..], empty, empty.len(), d, last);
        }
        level = parents;
    }
    let mut root = vec![0u8; params.output_len()];
    let empty = empties.last().expect("a tree has a level below its root");
    hash_node::<S>(&level, empty, empty.len(), d, &mut root);
    root
}

/// Parents below the root whose D children are all given: `children` holds
/// D·c bytes for each, back to back, and `out` gets their c-byte values;
/// `WIDTH` nodes per unit of `nodes`, on the workers.
pub(crate) fn whole_nodes<A: Absorb>(
    params: &TreeParams,
    workers: Workers<'_>,
    nodes: &A,
    children: &[u8],
    out: &mut [u8],
) {
    let spec = params.algorithm().sponge_spec();
    let (c, rate) = (spec.output_len(), spec.rate());
    let (w, node_len) = (A::WIDTH, params.degree() as usize * c);
    let groups_per_task = TASK_BYTES.div_ceil(w * node_len);
    workers.for_each_pair(
        (out, w * c),
        (children, w * node_len),
        groups_per_task,
        |_, out, children| hash_nodes(nodes, rate, children, node_len, out),
    );
}

/// The chaining values of empty subtrees of degree `d` under `S`, from an
/// empty leaf (V_H of nothing) up to the root's children: `height` values,
/// computed once per process for each function and degree. A small input's
/// tree is mostly empty subtrees: computed anew for each, they were half of
/// its permutations at H = 8 (and with a large D, many more).
fn empty_subtrees<S: Sponge>(d: usize, height: u32) -> Vec<Vec<u8>> {
    type Cache = HashMap<(Algorithm, usize), Vec<Vec<u8>>>;
    static CACHE: LazyLock<Mutex<Cache>> = LazyLock::new(Default::default);
    let height = height as usize;
    let mut cache = CACHE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let values = cache.entry((S::ALGORITHM, d)).or_default();
    if values.is_empty() {
        let mut leaf = vec![0u8; S::ALGORITHM.chaining_len()];
        S::hash_into(&[], &mut leaf);
        values.push(leaf);
    }
    while values.len() < height {
        let below = values.last().expect("the leaf's value is first");
        let mut parent = vec![0u8; below.len()];
        hash_node::<S>(&[], below, below.len(), d, &mut parent);
        values.push(parent);
    }
    values[..height].to_vec()
}

/// Up to `WIDTH` nodes side by side on one unit of `kernel`: `children`
/// holds their messages back to back, `node_len` bytes each, and `out`
/// gets their `out.len() / nodes` byte outputs.
fn hash_nodes<A: Absorb>(
    kernel: &A,
    rate: usize,
    children: &[u8],
    node_len: usize,
    out: &mut [u8],
) {
    const { assert!(A::WIDTH <= MAX_WIDTH) };
    let count = children.len() / node_len;
    let unit = &mut A::Unit::fresh();
    let whole = node_len - node_len % rate;
    // One rate block of each node, side by side (only where a node holds
    // whole blocks: D·c ≥ rate); lanes without a node absorb zeros, and give
    // no output.
    let mut gathered = vec![0u8; if whole > 0 { A::WIDTH * rate } else { 0 }];
    for start in (0..whole).step_by(rate) {
        for (node, block) in children.chunks(node_len).zip(gathered.chunks_mut(rate)) {
            block.copy_from_slice(&node[start..start + rate]);
        }
        kernel.absorb_blocks(unit, &gathered);
    }
    for (lane, node) in children.chunks(node_len).enumerate() {
        kernel.absorb_leaf(unit, lane, &node[whole..]);
    }
    let lens = [node_len as u64; MAX_WIDTH];
    kernel.finish_unit(unit, &lens[..count], out);
}

/// The widest unit of any kernel.
const MAX_WIDTH: usize = 8;

/// A node whose first children are `children` (whole values of
/// `child_len` bytes) and whose remaining children, up to `degree`, are all
/// `empty` (which may be left empty when there are none).
pub(crate) fn hash_node<S: Sponge>(
    children: &[u8],
    empty: &[u8],
    child_len: usize,
    degree: usize,
    out: &mut [u8],
) {
    let mut sponge = S::default();
    sponge.absorb(children);
    let mut missing = degree - children.len() / child_len;
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
