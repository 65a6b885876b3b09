// The chaining values of a run of whole chunks, for the standard parallel
// hashes (docs/SPEC.md, "Standard functions"): KT128 and KT256 hash every
// 8192-byte chunk with TurboSHAKE (12 rounds, domain byte 0x0B),
// ParallelHash128 and 256 every B-byte block with SHAKE (24 rounds, 0x1F).
// Each chunk goes through a sponge of its own, of Keccak-p[1600,
// TREEHASH_ROUNDS] (keccak.cuh), rate TREEHASH_RATE and domain byte
// TREEHASH_DS, and its first TREEHASH_CV bytes of output are written. These
// facts come from the host's one table (SpongeSpec, src/sponge.rs) as -D
// defines. Compiled by NVRTC after keccak.cuh, apart from the LI kernels.
//
// Layout: one thread per chunk (its state in registers), a warp per 32
// neighbouring chunks. A thread reading its own chunk would load words
// chunk_len bytes apart from its neighbours' (8 KiB for KT): every lane's
// load its own sector, a warp's 32 loads 32 transactions for 256 bytes. So
// the warp stages each rate block of its 32 chunks through shared memory:
// it loads the 32 blocks together, the blocks laid end to end and lane i
// taking words i, i + 32, ..., so that neighbouring lanes read neighbouring
// words of one block (a warp's load touches two or three runs of RATE
// contiguous bytes); then each lane XORs its own chunk's row of shared
// memory into its state and permutes. The chaining values leave the same
// way, as one contiguous run per warp. Rows are an odd number of words
// apart, so the 64-bit reads of a row by 16 lanes at once hit 16 different
// bank pairs.
//
// Any chunk_len >= 1 and any input address: where the address or chunk_len
// is not a multiple of 8, each word is made of two aligned loads (funnel
// shifts), and a chunk's last block goes through shared memory byte by
// byte. The output buffer must be 8-byte aligned.

#if !defined(TREEHASH_RATE) || !defined(TREEHASH_CV) || !defined(TREEHASH_DS) || \
    !defined(TREEHASH_THREADS_PER_BLOCK)
#error "compile with -DTREEHASH_RATE, -DTREEHASH_CV, -DTREEHASH_DS and -DTREEHASH_THREADS_PER_BLOCK"
#endif

constexpr u32 CHUNK_LANES = TREEHASH_RATE / 8;
// Words from one row of shared memory to the next: odd (see above).
constexpr u32 CHUNK_STRIDE = CHUNK_LANES | 1;
constexpr u32 CHUNK_WARPS = TREEHASH_THREADS_PER_BLOCK / 32;
constexpr u32 CV_WORDS = (TREEHASH_CV + 7) / 8;
static_assert(TREEHASH_RATE % 8 == 0 && TREEHASH_RATE < 200, "a FIPS 202 rate");
static_assert(TREEHASH_CV >= 1 && TREEHASH_CV <= TREEHASH_RATE, "one block of output");
static_assert(TREEHASH_DS >= 0x01 && TREEHASH_DS <= 0x7f, "a domain byte");
static_assert(TREEHASH_THREADS_PER_BLOCK % 32 == 0, "whole warps");

// The little-endian word at p, at any address: two aligned loads where p is
// not 8-byte aligned. An aligned word that holds a byte of the input lies in
// the input's allocation (allocations are whole pages), so neither load
// faults, though one may read bytes beside the input.
__device__ __forceinline__ u64 load_word_anywhere(const u8* p) {
    const size_t at = (size_t)p;
    const u32 shift = 8 * (u32)(at & 7);
    const u64* w = reinterpret_cast<const u64*>(at - (at & 7));
    if (shift == 0) return w[0];
    return (w[0] >> shift) | (w[1] << (64 - shift));
}

// Stages `words` words from the start of each of the warp's first `chunks`
// chunks, `first` being the first chunk's: word k of chunk j goes to row j,
// column k. ALIGNED: every word lies on an 8-byte boundary.
template <bool ALIGNED>
__device__ __forceinline__ void stage_words(u64* stage, const u8* first, u64 chunk_len,
                                            u32 words, u32 chunks, u32 lane) {
    for (u32 w = lane; w < chunks * words; w += 32) {
        const u32 j = w / words, k = w % words;
        const u8* p = first + j * chunk_len + 8 * k;
        stage[j * CHUNK_STRIDE + k] =
            ALIGNED ? *reinterpret_cast<const u64*>(p) : load_word_anywhere(p);
    }
}

// Stages a chunk's last block: its last `tail` bytes (fewer than the rate),
// then zeros, the domain byte after the bytes and pad10*1's last bit at the
// end of the rate, in each lane's row.
template <bool ALIGNED>
__device__ __forceinline__ void stage_last_block(u64* stage, const u8* first, u64 chunk_len,
                                                 u32 tail, u32 chunks, u32 lane) {
    u64* row = stage + lane * CHUNK_STRIDE;
    __syncwarp();  // every lane has read its row of the block before
#pragma unroll
    for (u32 k = 0; k < CHUNK_LANES; ++k) row[k] = 0;
    __syncwarp();
    u8* bytes = reinterpret_cast<u8*>(stage);
    if (ALIGNED) {
        // chunk_len is a multiple of 8 and so is the rate: so is the tail.
        stage_words<true>(stage, first, chunk_len, tail / 8, chunks, lane);
    } else {
        for (u32 f = lane; f < chunks * tail; f += 32) {
            const u32 j = f / tail, k = f % tail;
            bytes[j * CHUNK_STRIDE * 8 + k] = first[j * chunk_len + k];
        }
    }
    __syncwarp();
    u8* own = bytes + lane * CHUNK_STRIDE * 8;
    own[tail] ^= (u8)TREEHASH_DS;
    own[TREEHASH_RATE - 1] ^= 0x80;
}

// Writes the chaining values of the warp's `chunks` chunks, from each lane's
// state, to out (the warp's first chunk's value): through the rows again, so
// that the warp's stores are one contiguous run.
__device__ __forceinline__ void write_values(u64* stage, const u64 s[25], u8* out, u32 chunks,
                                             u32 lane) {
    u64* row = stage + lane * CHUNK_STRIDE;
    __syncwarp();  // every lane has read its row of the last block
#pragma unroll
    for (u32 k = 0; k < CV_WORDS; ++k) row[k] = s[k];
    __syncwarp();
    if (TREEHASH_CV % 8 == 0) {
        u64* out_words = reinterpret_cast<u64*>(out);
        for (u32 w = lane; w < chunks * CV_WORDS; w += 32)
            out_words[w] = stage[(w / CV_WORDS) * CHUNK_STRIDE + w % CV_WORDS];
    } else {
        const u8* bytes = reinterpret_cast<const u8*>(stage);
        for (u32 f = lane; f < chunks * TREEHASH_CV; f += 32)
            out[f] = bytes[(f / TREEHASH_CV) * CHUNK_STRIDE * 8 + f % TREEHASH_CV];
    }
}

template <bool ALIGNED>
__device__ __forceinline__ void chunk_values_impl(u64* stage, const u8* __restrict__ chunks,
                                                  u64 chunk_len, u64 count,
                                                  u8* __restrict__ out) {
    const u32 warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const u64 base = ((u64)blockIdx.x * CHUNK_WARPS + warp) * 32;
    if (base >= count) return;  // the whole warp leaves together
    const u32 here = (u32)(count - base < 32 ? count - base : 32);
    const u8* first = chunks + base * chunk_len;
    const u64* row = stage + lane * CHUNK_STRIDE;

    u64 s[25];
#pragma unroll
    for (int k = 0; k < 25; ++k) s[k] = 0;
    const u64 blocks = chunk_len / TREEHASH_RATE;
    for (u64 b = 0; b < blocks; ++b) {
        __syncwarp();  // every lane has read its row of the block before
        stage_words<ALIGNED>(stage, first + b * TREEHASH_RATE, chunk_len, CHUNK_LANES, here,
                             lane);
        __syncwarp();
#pragma unroll
        for (u32 k = 0; k < CHUNK_LANES; ++k) s[k] ^= row[k];
        keccak_f1600(s);
    }
    const u32 tail = (u32)(chunk_len - blocks * TREEHASH_RATE);
    stage_last_block<ALIGNED>(stage, first + blocks * TREEHASH_RATE, chunk_len, tail, here, lane);
#pragma unroll
    for (u32 k = 0; k < CHUNK_LANES; ++k) s[k] ^= row[k];
    keccak_f1600(s);
    write_values(stage, s, out + base * TREEHASH_CV, here, lane);
}

// The chaining values of `count` chunks of `chunk_len` bytes (>= 1) laid back
// to back from `chunks`: TREEHASH_CV bytes each to `out` (8-byte aligned), in
// order. Launch with TREEHASH_THREADS_PER_BLOCK threads per block and
// ceil(count / TREEHASH_THREADS_PER_BLOCK) blocks.
extern "C" __global__ void __launch_bounds__(TREEHASH_THREADS_PER_BLOCK)
    chunk_values(const u8* chunks, u64 chunk_len, u64 count, u8* out) {
    __shared__ u64 stages[CHUNK_WARPS][32 * CHUNK_STRIDE];
    u64* stage = stages[threadIdx.x / 32];
    const bool aligned = (size_t)chunks % 8 == 0 && chunk_len % 8 == 0;
    if (aligned)
        chunk_values_impl<true>(stage, chunks, chunk_len, count, out);
    else
        chunk_values_impl<false>(stage, chunks, chunk_len, count, out);
}
