// The LI tree on the GPU (docs/SPEC.md): leaves absorb their blocks span by
// span, one thread per leaf (or one warp per leaf: few_leaves.cu); then
// every parent level, one thread per node; then the root. Compiled by NVRTC
// at run time, after keccak.cuh, tree.cuh and few_leaves.cu.
//
// Leaf states live in device memory between spans, lane-major
// (lane w of leaf j at states[w * leaf_count + j]) so that a warp's loads and
// stores of one lane are contiguous.

// Absorbs one span: the message's next blocks (span_len bytes, the last
// block possibly short; a transfer through the host's ring, or input already
// on the device), the first of which is leaf first_leaf's; `absorbed` is
// what each leaf held before the span. Thread t takes the blocks t, t + L,
// t + 2L, ... of the span, which all belong to one leaf (span_block_leaf);
// only min(blocks, L) threads have work.
template <int RATE>
__device__ void absorb_leaves_impl(u64* __restrict__ states, u64 leaf_count,
                              const u8* __restrict__ span, u64 span_len, u64 block_size,
                              u64 first_leaf, LeafLengths absorbed) {
    const u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    const u64 blocks = (span_len + block_size - 1) / block_size;
    if (t >= blocks || t >= leaf_count) return;
    const u64 leaf = span_block_leaf(first_leaf, t, leaf_count);
    u64 s[25];
#pragma unroll
    for (int w = 0; w < 25; ++w) s[w] = states[w * leaf_count + leaf];
    // The leaf's bytes before this span decide where in the rate it stands.
    u32 lane = (u32)(leaf_length(absorbed, leaf) % RATE) / 8;
    for (u64 i = t; i < blocks; i += leaf_count) {
        const u64 at = i * block_size;
        const u64 len = span_len - at < block_size ? span_len - at : block_size;
        absorb<RATE, 8>(s, &lane, span + at, len);
    }
#pragma unroll
    for (int w = 0; w < 25; ++w) states[w * leaf_count + leaf] = s[w];
}

// Pads every leaf and writes its output (out_len bytes: c, or n at H = 0).
// `lengths` is what each leaf holds: its padding starts there in the rate.
template <int RATE, int CV, u32 DS>
__device__ void finalize_leaves_impl(const u64* __restrict__ states, u64 leaf_count,
                                LeafLengths lengths, u8* __restrict__ out, u32 out_len) {
    const u64 leaf = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (leaf >= leaf_count) return;
    u64 s[25];
#pragma unroll
    for (int w = 0; w < 25; ++w) s[w] = states[w * leaf_count + leaf];
    pad_and_permute<RATE, DS>(s, (u32)(leaf_length(lengths, leaf) % RATE));
    squeeze<RATE, CV>(s, out + leaf * out_len, out_len);
}

// One level of inner nodes: node k hashes the `degree` chaining values
// children[k * degree .. (k + 1) * degree), contiguous, and writes out_len
// bytes. The root is the same with one node and out_len = n.
template <int RATE, int CV, u32 DS>
__device__ void hash_nodes_impl(const u8* __restrict__ children, u64 nodes, u64 degree,
                           u8* __restrict__ out, u32 out_len) {
    const u64 k = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= nodes) return;
    u64 s[25];
#pragma unroll
    for (int w = 0; w < 25; ++w) s[w] = 0;
    u32 lane = 0;
    const u64 len = degree * CV;
    absorb<RATE, 4>(s, &lane, children + k * len, len);
    pad_and_permute<RATE, DS>(s, (u32)(len % RATE));
    squeeze<RATE, CV>(s, out + k * out_len, out_len);
}

// The entry points, for the one function the host compiles them for. Its
// facts come from the host's table (src/params.rs) as -D defines, so that
// they are stated once; so does the block size the host launches with.
#if !defined(TREEHASH_RATE) || !defined(TREEHASH_CV) || !defined(TREEHASH_DS) || \
    !defined(TREEHASH_THREADS_PER_BLOCK)
#error "compile with -DTREEHASH_RATE, -DTREEHASH_CV, -DTREEHASH_DS and -DTREEHASH_THREADS_PER_BLOCK"
#endif

extern "C" __global__ void __launch_bounds__(TREEHASH_THREADS_PER_BLOCK)
    absorb_leaves(u64* states, u64 leaf_count, const u8* span, u64 span_len, u64 block_size,
                  u64 first_leaf, LeafLengths absorbed) {
    absorb_leaves_impl<TREEHASH_RATE>(states, leaf_count, span, span_len, block_size, first_leaf,
                                      absorbed);
}

extern "C" __global__ void __launch_bounds__(TREEHASH_THREADS_PER_BLOCK)
    absorb_leaves_warp(u64* states, u64 leaf_count, const u8* span, u64 span_len,
                       u64 block_size, u64 first_leaf, LeafLengths absorbed) {
    absorb_leaves_warp_impl<TREEHASH_RATE>(states, leaf_count, span, span_len, block_size,
                                           first_leaf, absorbed);
}

extern "C" __global__ void __launch_bounds__(TREEHASH_THREADS_PER_BLOCK)
    finalize_leaves(const u64* states, u64 leaf_count, LeafLengths lengths, u8* out,
                    u32 out_len) {
    finalize_leaves_impl<TREEHASH_RATE, TREEHASH_CV, TREEHASH_DS>(states, leaf_count, lengths,
                                                                  out, out_len);
}

extern "C" __global__ void __launch_bounds__(TREEHASH_THREADS_PER_BLOCK)
    hash_nodes(const u8* children, u64 nodes, u64 degree, u8* out, u32 out_len) {
    hash_nodes_impl<TREEHASH_RATE, TREEHASH_CV, TREEHASH_DS>(children, nodes, degree, out, out_len);
}
