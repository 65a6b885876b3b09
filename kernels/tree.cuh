// What the LI kernels take of the leaf level (docs/SPEC.md: block i of M
// goes to leaf i mod L). The arithmetic is the host's, stated once in
// src/tree.rs: each launch gets its results as arguments, in these forms.

// The bytes each leaf holds: leaf j holds `before` bytes for j < last,
// `at_last` for j == last (the leaf of the last block so far, which may be
// short) and `after` for j > last. src/tree.rs's LeafLengths, the same
// layout (four u64).
struct LeafLengths {
    u64 last, before, at_last, after;
};

__device__ __forceinline__ u64 leaf_length(LeafLengths lengths, u64 leaf) {
    return leaf < lengths.last ? lengths.before
           : leaf == lengths.last ? lengths.at_last
                                  : lengths.after;
}

// The leaf of a span's block t (t < leaf_count), where the span's first
// block is leaf first_leaf's: blocks go to consecutive leaves, from leaf
// L - 1 back to leaf 0. Blocks t + L, t + 2L, ... of the span are that
// leaf's too.
__device__ __forceinline__ u64 span_block_leaf(u64 first_leaf, u64 t, u64 leaf_count) {
    const u64 leaf = first_leaf + t;
    return leaf < leaf_count ? leaf : leaf - leaf_count;
}
