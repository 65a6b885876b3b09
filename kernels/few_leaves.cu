// Few leaves: one warp per leaf. With one thread per leaf, a tree of 256
// leaves runs 8 warps on a GPU built for thousands, and each leaf's sponge
// waits on one thread's rounds. Here lane i (< 25) of a warp holds lane
// A[i] = A[x + 5y] of one leaf's state, and a round costs two levels of warp
// shuffles:
//   theta:    every lane gathers the other four lanes of its column (its
//             parity), then the parities of columns x-1 and x+1 (two more);
//             gathering the ten lanes of both columns at once, one level
//             deep, is slower at every leaf count
//             (docs/decisions/0013-warp-per-leaf-up-to-2048.md);
//   rho:      each lane rotates itself by its own offset;
//   pi, chi:  every lane gathers the three rotated lanes that chi combines
//             into its new value, straight from where pi takes them.
// Lanes 25..31 follow along on a copy of lane 0 and their results are unused.
// The next words of the leaf's data are loaded before each permutation, so
// that the load's latency hides behind the rounds.
//
// Same contract as absorb_leaves (kernels/treehash.cu): warp t takes the
// span's blocks t, t + L, ... of leaf span_block_leaf(first_leaf, t, L)
// (tree.cuh); any B, the last block possibly short; lane-major states in
// device memory.

#define FULL_WARP 0xffffffffu

__device__ __constant__ int KECCAK_RHO[25] = KECCAK_RHO_OFFSETS;

// A rotation by a per-lane amount, prepared once: two funnel shifts on the
// halves, which trade places for amounts of 32 or more.
struct LaneRotation {
    bool swap;
    u32 by;  // 0..31

    __device__ explicit LaneRotation(int n) : swap(n >= 32), by((u32)n & 31) {}

    __device__ __forceinline__ u64 apply(u64 x) const {
        u32 lo = (u32)x, hi = (u32)(x >> 32);
        if (swap) {
            const u32 t = lo;
            lo = hi;
            hi = t;
        }
        const u32 new_hi = __funnelshift_l(lo, hi, by);
        const u32 new_lo = __funnelshift_l(hi, lo, by);
        return ((u64)new_hi << 32) | new_lo;
    }
};

// Keccak-f[1600] on a state spread over the warp: `a` is this lane's word;
// `theta_src` holds the other four lanes of its column, then the lanes of
// its row in columns x-1 and x+1.
__device__ __forceinline__ u64 keccak_f1600_warp(u64 a, const int theta_src[6],
                                                 LaneRotation rho, const int chi_src[3],
                                                 bool first_lane) {
    // Unrolled: short rounds, the round constants immediates.
#pragma unroll
    for (int round = KECCAK_FIRST_ROUND; round < KECCAK_F_ROUNDS; ++round) {
        // theta: a ^= C[x-1] ^ rotl(C[x+1], 1)
        u64 c = a;
#pragma unroll
        for (int k = 0; k < 4; ++k) c ^= __shfl_sync(FULL_WARP, a, theta_src[k]);
        const u64 left = __shfl_sync(FULL_WARP, c, theta_src[4]);
        const u64 right = __shfl_sync(FULL_WARP, c, theta_src[5]);
        a ^= left ^ rotl64(right, 1);
        // rho
        a = rho.apply(a);
        // pi and chi: A'[x, y] = B[x, y] ^ (~B[x+1, y] & B[x+2, y]), where B
        // is the rotated state moved by pi.
        const u64 b0 = __shfl_sync(FULL_WARP, a, chi_src[0]);
        const u64 b1 = __shfl_sync(FULL_WARP, a, chi_src[1]);
        const u64 b2 = __shfl_sync(FULL_WARP, a, chi_src[2]);
        a = b0 ^ (~b1 & b2);
        // iota
        if (first_lane) a ^= KECCAK_RC[round];
    }
    return a;
}

// The bytes one leaf takes from a span, read a segment at a time: a segment
// fills sponge lanes [pos, pos + words) with whole words and ends at the end
// of the rate or of a block; the message's last bytes (a partial word) go in
// lane pos + words.
struct LeafCursor {
    const u8* span;
    u64 span_len, block_size, leaf_count, blocks;
    u64 block;  // the block being read
    u64 at;     // bytes of it consumed
    u64 len;    // its length
    bool done;

    __device__ void start_block() {
        const u64 from = block * block_size;
        len = span_len - from < block_size ? span_len - from : block_size;
        at = 0;
    }

    // This lane's word of the segment at sponge lane `pos` (< LANES), and
    // the whole words it holds; the cursor moves past the segment.
    template <u32 LANES>
    __device__ __forceinline__ u64 next(u32 lane, u32 pos, u32* words_out) {
        const u64 left = len - at;
        const u32 words = (u32)min((u64)(LANES - pos), left / 8);
        const u32 tail = (words == left / 8 && pos + words < LANES) ? (u32)(left % 8) : 0;
        const u8* p = span + block * block_size + at;
        u64 word = 0;
        if (lane >= pos && lane < pos + words) word = load_word<8>(p + 8 * (lane - pos));
        if (tail > 0 && lane == pos + words) word = load_tail<8>(p + 8 * words, tail);
        at += 8 * (u64)words + tail;
        if (at == len) {
            block += leaf_count;
            done = block >= blocks;
            if (!done) start_block();
        }
        *words_out = words;
        return word;
    }
};

template <int RATE>
__device__ void absorb_leaves_warp_impl(u64* __restrict__ states, u64 leaf_count,
                                        const u8* __restrict__ span, u64 span_len,
                                        u64 block_size, u64 first_leaf,
                                        LeafLengths absorbed) {
    constexpr u32 LANES = RATE / 8;
    const u64 t = ((u64)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const u32 lane = threadIdx.x % 32;
    const u64 blocks = (span_len + block_size - 1) / block_size;
    if (t >= blocks || t >= leaf_count) return;  // the whole warp leaves together
    const u64 leaf = span_block_leaf(first_leaf, t, leaf_count);

    // This lane's place in the state and its shuffle partners.
    const u32 me = lane < 25 ? lane : 0;
    const int x = me % 5, y = me / 5;
    int theta_src[6];
#pragma unroll
    for (int k = 0; k < 4; ++k) theta_src[k] = x + 5 * ((y + 1 + k) % 5);
    theta_src[4] = (x + 4) % 5 + 5 * y;
    theta_src[5] = (x + 1) % 5 + 5 * y;
    // B[X, Y] is lane (x', y') = ((3Y + X) mod 5, X) of the rotated state.
    int chi_src[3];
#pragma unroll
    for (int k = 0; k < 3; ++k) {
        const int bx = (x + k) % 5;
        chi_src[k] = (3 * y + bx) % 5 + 5 * bx;
    }
    const LaneRotation rho(KECCAK_RHO[me]);
    const bool first_lane = lane == 0;

    u64 a = states[(u64)me * leaf_count + leaf];
    // The leaf's bytes before this span decide where in the rate it stands.
    u32 pos = (u32)(leaf_length(absorbed, leaf) % RATE) / 8;

    LeafCursor cursor{span, span_len, block_size, leaf_count, blocks, t, 0, 0, false};
    cursor.start_block();
    u32 words;
    u64 word = cursor.next<LANES>(lane, pos, &words);
    while (true) {
        a ^= word;
        pos += words;
        const bool more = !cursor.done;
        if (pos == LANES) {
            // Load the next segment before the rounds, use it after them.
            if (more) word = cursor.next<LANES>(lane, 0, &words);
            a = keccak_f1600_warp(a, theta_src, rho, chi_src, first_lane);
            pos = 0;
        } else if (more) {
            word = cursor.next<LANES>(lane, pos, &words);
        }
        if (!more) break;
    }
    if (lane < 25) states[(u64)lane * leaf_count + leaf] = a;
}
