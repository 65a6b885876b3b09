// Few leaves: one warp per leaf. With one thread per leaf, a tree of 256
// leaves runs 8 warps on a GPU built for thousands, and each leaf's sponge
// waits on one thread's 24 rounds. Here lane i (< 25) of a warp holds lane
// A[i] = A[x + 5y] of one leaf's state. Chi makes lane (x, y) of the next
// state from three lanes B[x + k, y] (k = 0, 1, 2) of the state after theta,
// rho and pi, and pi takes each from a lane s_k of the round's input. So a
// round costs two levels of warp shuffles:
//   1. every lane gathers the other four lanes of its column (their XOR is
//      the column's parity C[x]), and the raw lanes s_k, which need nothing
//      from this round;
//   2. every lane gathers the five column parities, from which it applies
//      theta (D[c] = C[c-1] ^ rotl(C[c+1], 1)) and rho to the three s_k
//      itself, then chi and iota.
// Three levels (theta's parities, its neighbour parities, then chi's
// sources, each lane applying theta and rho to itself) were 1.5 x slower,
// and one level for theta (ten lanes at once) slower still: a level's
// latency costs more than the shuffles it saves (docs/PERFORMANCE.md).
// Lanes 25..31 follow along on a copy of lane 0 and their results are unused.
// The next words of the leaf's data are loaded before each permutation, so
// that the load's latency hides behind the rounds.
//
// Same contract as absorb_leaves (kernels/treehash.cu): warp t takes the
// chunk's blocks t, t + L, ... of leaf (first_block + t) mod L; any B, the
// last block possibly short; lane-major states in device memory.

#define FULL_WARP 0xffffffffu

__device__ __constant__ int KECCAK_RHO[25] = KECCAK_RHO_OFFSETS;

// A rotation by a per-lane amount, prepared once: two funnel shifts on the
// halves, which trade places for amounts of 32 or more.
struct LaneRotation {
    bool swap;
    u32 by;  // 0..31

    LaneRotation() = default;
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

// One lane's part in Keccak-f[1600] on a state spread over a warp: whom it
// gathers from, and the rotations it applies.
struct WarpKeccak {
    int column[4];   // the other lanes of its column
    int source[3];   // s_k: the lane that pi moves to B[x + k, y]
    int parity[5];   // a lane of column c0 - 1 + j, where c0 is s_0's column
    LaneRotation rho[3];  // s_k's rho offset
    bool first_lane;      // lane 0 takes iota's constant

    // B[X, Y] comes from lane ((X + 3Y) mod 5, X).
    __device__ static int source_of(int x, int y, int k) {
        const int bx = (x + k) % 5;
        return (bx + 3 * y) % 5 + 5 * bx;
    }

    __device__ explicit WarpKeccak(u32 lane) : first_lane(lane == 0) {
        const u32 me = lane < 25 ? lane : 0;
        const int x = me % 5, y = me / 5;
#pragma unroll
        for (int k = 0; k < 4; ++k) column[k] = x + 5 * ((y + 1 + k) % 5);
#pragma unroll
        for (int k = 0; k < 3; ++k) {
            source[k] = source_of(x, y, k);
            rho[k] = LaneRotation(KECCAK_RHO[source[k]]);
        }
        const int c0 = source[0] % 5;
#pragma unroll
        for (int j = 0; j < 5; ++j) parity[j] = (c0 + 4 + j) % 5 + 5 * y;
    }

    // 24 rounds on this lane's word `a`; unrolled, the round constants
    // immediates.
    __device__ __forceinline__ u64 permute(u64 a) const {
#pragma unroll
        for (int round = 0; round < 24; ++round) {
            u64 s[3];
#pragma unroll
            for (int k = 0; k < 3; ++k) s[k] = __shfl_sync(FULL_WARP, a, source[k]);
            u64 c = a;
#pragma unroll
            for (int k = 0; k < 4; ++k) c ^= __shfl_sync(FULL_WARP, a, column[k]);
            // iota, early: lane 0's s_0 is lane 0, whose rho offset is 0.
            if (first_lane) s[0] ^= KECCAK_RC[round];
            u64 p[5];
#pragma unroll
            for (int j = 0; j < 5; ++j) p[j] = __shfl_sync(FULL_WARP, c, parity[j]);
            // s_k's column is c0 + k: D = C[c0 + k - 1] ^ rotl(C[c0 + k + 1], 1).
            u64 b[3];
#pragma unroll
            for (int k = 0; k < 3; ++k) b[k] = rho[k].apply(s[k] ^ p[k] ^ rotl64(p[k + 2], 1));
            a = b[0] ^ (~b[1] & b[2]);
        }
        return a;
    }
};

// The bytes one leaf takes from a chunk, read a segment at a time: a segment
// fills sponge lanes [pos, pos + words) with whole words and ends at the end
// of the rate or of a block; the message's last bytes (a partial word) go in
// lane pos + words.
struct LeafCursor {
    const u8* chunk;
    u64 chunk_len, block_size, leaf_count, blocks;
    u64 block;  // the block being read
    u64 at;     // bytes of it consumed
    u64 len;    // its length
    bool done;

    __device__ void start_block() {
        const u64 from = block * block_size;
        len = chunk_len - from < block_size ? chunk_len - from : block_size;
        at = 0;
    }

    // This lane's word of the segment at sponge lane `pos` (< LANES), and
    // the whole words it holds; the cursor moves past the segment.
    template <u32 LANES>
    __device__ __forceinline__ u64 next(u32 lane, u32 pos, u32* words_out) {
        const u64 left = len - at;
        const u32 words = (u32)min((u64)(LANES - pos), left / 8);
        const u32 tail = (words == left / 8 && pos + words < LANES) ? (u32)(left % 8) : 0;
        const u8* p = chunk + block * block_size + at;
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
                                        const u8* __restrict__ chunk, u64 chunk_len,
                                        u64 first_block, u64 block_size) {
    constexpr u32 LANES = RATE / 8;
    const u64 t = ((u64)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const u32 lane = threadIdx.x % 32;
    const u64 blocks = (chunk_len + block_size - 1) / block_size;
    if (t >= blocks || t >= leaf_count) return;  // the whole warp leaves together
    const u64 leaf = (first_block + t) % leaf_count;

    const WarpKeccak keccak(lane);
    const u32 me = lane < 25 ? lane : 0;
    u64 a = states[(u64)me * leaf_count + leaf];
    // The leaf's blocks before this chunk decide where in the rate it stands.
    const u64 blocks_before = (first_block + leaf_count - 1 - leaf) / leaf_count;
    u32 pos = (u32)((blocks_before * block_size) % RATE) / 8;

    LeafCursor cursor{chunk, chunk_len, block_size, leaf_count, blocks, t, 0, 0, false};
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
            a = keccak.permute(a);
            pos = 0;
        } else if (more) {
            word = cursor.next<LANES>(lane, pos, &words);
        }
        if (!more) break;
    }
    if (lane < 25) states[(u64)lane * leaf_count + leaf] = a;
}
