// The LI tree on the GPU (docs/SPEC.md): leaves absorb their blocks chunk by
// chunk, one thread per leaf (or one warp per leaf: few_leaves.cu); then
// every parent level, one thread per node; then the root. Compiled by NVRTC
// at run time, after keccak.cuh and few_leaves.cu.
//
// Leaf states live in device memory between chunks, lane-major
// (lane w of leaf j at states[w * leaf_count + j]) so that a warp's loads and
// stores of one lane are contiguous.

// Absorbs one chunk: the message's blocks first_block, first_block + 1, ...
// (chunk_len bytes, the last block possibly short). Thread t takes the
// blocks t, t + L, t + 2L, ... of the chunk, which all belong to leaf
// (first_block + t) mod L; only min(blocks, L) threads have work.
template <int RATE>
__device__ void absorb_leaves_impl(u64* __restrict__ states, u64 leaf_count,
                              const u8* __restrict__ chunk, u64 chunk_len,
                              u64 first_block, u64 block_size) {
    const u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    const u64 blocks = (chunk_len + block_size - 1) / block_size;
    if (t >= blocks || t >= leaf_count) return;
    const u64 leaf = (first_block + t) % leaf_count;
    u64 s[25];
#pragma unroll
    for (int w = 0; w < 25; ++w) s[w] = states[w * leaf_count + leaf];
    // The leaf's blocks before this chunk decide where in the rate it stands.
    const u64 blocks_before = (first_block + leaf_count - 1 - leaf) / leaf_count;
    u32 lane = (u32)((blocks_before * block_size) % RATE) / 8;
    for (u64 i = t; i < blocks; i += leaf_count) {
        const u64 at = i * block_size;
        const u64 len = chunk_len - at < block_size ? chunk_len - at : block_size;
        absorb<RATE, 8>(s, &lane, chunk + at, len);
    }
#pragma unroll
    for (int w = 0; w < 25; ++w) states[w * leaf_count + leaf] = s[w];
}

// Pads every leaf and writes its output (out_len bytes: c, or n at H = 0).
// The leaf's length follows from the message length alone.
template <int RATE, int CV, u32 DS>
__device__ void finalize_leaves_impl(const u64* __restrict__ states, u64 leaf_count,
                                u64 message_len, u64 block_size, u8* __restrict__ out,
                                u32 out_len) {
    const u64 leaf = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (leaf >= leaf_count) return;
    u64 s[25];
#pragma unroll
    for (int w = 0; w < 25; ++w) s[w] = states[w * leaf_count + leaf];
    const u64 blocks = (message_len + block_size - 1) / block_size;
    const u64 own_blocks = (blocks + leaf_count - 1 - leaf) / leaf_count;
    u64 bytes = own_blocks * block_size;
    if (blocks > 0 && (blocks - 1) % leaf_count == leaf) bytes -= blocks * block_size - message_len;
    pad_and_permute<RATE, DS>(s, (u32)(bytes % RATE));
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
    absorb_leaves(u64* states, u64 leaf_count, const u8* chunk, u64 chunk_len, u64 first_block,
                  u64 block_size) {
    absorb_leaves_impl<TREEHASH_RATE>(states, leaf_count, chunk, chunk_len, first_block, block_size);
}

extern "C" __global__ void __launch_bounds__(TREEHASH_THREADS_PER_BLOCK)
    absorb_leaves_warp(u64* states, u64 leaf_count, const u8* chunk, u64 chunk_len,
                       u64 first_block, u64 block_size) {
    absorb_leaves_warp_impl<TREEHASH_RATE>(states, leaf_count, chunk, chunk_len, first_block,
                                           block_size);
}

extern "C" __global__ void __launch_bounds__(TREEHASH_THREADS_PER_BLOCK)
    finalize_leaves(const u64* states, u64 leaf_count, u64 message_len, u64 block_size, u8* out,
                    u32 out_len) {
    finalize_leaves_impl<TREEHASH_RATE, TREEHASH_CV, TREEHASH_DS>(states, leaf_count, message_len,
                                                            block_size, out, out_len);
}

extern "C" __global__ void __launch_bounds__(TREEHASH_THREADS_PER_BLOCK)
    hash_nodes(const u8* children, u64 nodes, u64 degree, u8* out, u32 out_len) {
    hash_nodes_impl<TREEHASH_RATE, TREEHASH_CV, TREEHASH_DS>(children, nodes, degree, out, out_len);
}
