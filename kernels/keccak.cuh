// Keccak-f[1600] and the sponge operations the tree kernels share.
//
// The state lives in 25 registers: every array index below is a compile-time
// constant once the loops are unrolled (a run-time index would move the
// state to local memory). Where a lane is chosen at run time, xor_lane and
// get_lane test every lane instead of indexing.

typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned char u8;

// The round constants of iota, round 0 first.
__device__ __constant__ u64 KECCAK_RC[] = {
    0x0000000000000001ULL, 0x0000000000008082ULL, 0x800000000000808aULL,
    0x8000000080008000ULL, 0x000000000000808bULL, 0x0000000080000001ULL,
    0x8000000080008081ULL, 0x8000000000008009ULL, 0x000000000000008aULL,
    0x0000000000000088ULL, 0x0000000080008009ULL, 0x000000008000000aULL,
    0x000000008000808bULL, 0x800000000000008bULL, 0x8000000000008089ULL,
    0x8000000000008003ULL, 0x8000000000008002ULL, 0x8000000000000080ULL,
    0x000000000000800aULL, 0x800000008000000aULL, 0x8000000080008081ULL,
    0x8000000000008080ULL, 0x0000000080000001ULL, 0x8000000080008008ULL};

// Keccak-p[1600, n_r] runs the last n_r rounds of Keccak-f[1600] (FIPS 202,
// section 3.3), so it starts at KECCAK_RC[KECCAK_FIRST_ROUND]. n_r comes
// from the host's table (Rounds in src/cpu/keccak.rs) as a -D define, so
// every loop over the rounds has constant bounds.
#ifndef TREEHASH_ROUNDS
#error "compile with -DTREEHASH_ROUNDS (12 or 24)"
#endif
constexpr int KECCAK_F_ROUNDS = sizeof(KECCAK_RC) / sizeof(KECCAK_RC[0]);
constexpr int KECCAK_FIRST_ROUND = KECCAK_F_ROUNDS - TREEHASH_ROUNDS;
static_assert(TREEHASH_ROUNDS > 0 && TREEHASH_ROUNDS <= KECCAK_F_ROUNDS, "1 to 24 rounds");

// The rho rotation of lane x + 5y, stated once for both permutations.
#define KECCAK_RHO_OFFSETS                                                                  \
    {0, 1, 62, 28, 27, 36, 44, 6, 55, 20, 3, 10, 43, 25, 39, 41, 45, 15, 21, 8, 18, 2, 61, 56, \
     14}

__device__ __forceinline__ u64 rotl64(u64 x, int n) {
    return n == 0 ? x : (x << n) | (x >> (64 - n));
}

// The permutation: TREEHASH_ROUNDS rounds of theta, rho, pi, chi and iota.
__device__ __forceinline__ void keccak_f1600(u64 a[25]) {
    // rho offsets, indexed by lane x + 5y.
    constexpr int RHO[25] = KECCAK_RHO_OFFSETS;
#pragma unroll 1
    for (int round = KECCAK_FIRST_ROUND; round < KECCAK_F_ROUNDS; ++round) {
        u64 c[5], b[25];
#pragma unroll
        for (int x = 0; x < 5; ++x)
            c[x] = a[x] ^ a[x + 5] ^ a[x + 10] ^ a[x + 15] ^ a[x + 20];
#pragma unroll
        for (int x = 0; x < 5; ++x) {
            const u64 d = c[(x + 4) % 5] ^ rotl64(c[(x + 1) % 5], 1);
#pragma unroll
            for (int y = 0; y < 5; ++y) a[x + 5 * y] ^= d;
        }
        // rho and pi: lane (x, y) moves to (y, 2x + 3y).
#pragma unroll
        for (int x = 0; x < 5; ++x)
#pragma unroll
            for (int y = 0; y < 5; ++y)
                b[y + 5 * ((2 * x + 3 * y) % 5)] = rotl64(a[x + 5 * y], RHO[x + 5 * y]);
#pragma unroll
        for (int y = 0; y < 5; ++y)
#pragma unroll
            for (int x = 0; x < 5; ++x)
                a[x + 5 * y] = b[x + 5 * y] ^ (~b[(x + 1) % 5 + 5 * y] & b[(x + 2) % 5 + 5 * y]);
        a[0] ^= KECCAK_RC[round];
    }
}

__device__ __forceinline__ void xor_lane(u64 s[25], u32 lane, u64 v) {
#pragma unroll
    for (u32 k = 0; k < 25; ++k)
        if (k == lane) s[k] ^= v;
}

__device__ __forceinline__ u64 get_lane(const u64 s[25], u32 lane) {
    u64 v = 0;
#pragma unroll
    for (u32 k = 0; k < 25; ++k)
        if (k == lane) v = s[k];
    return v;
}

// A little-endian 64-bit word from 8-byte-aligned (ALIGN == 8) or
// 4-byte-aligned (ALIGN == 4) memory.
template <int ALIGN>
__device__ __forceinline__ u64 load_word(const u8* p) {
    if (ALIGN == 8) return *reinterpret_cast<const u64*>(p);
    const u32* q = reinterpret_cast<const u32*>(p);
    return (u64)q[0] | ((u64)q[1] << 32);
}

// Fewer than 8 bytes, little-endian, from memory aligned to ALIGN when len >= 4.
template <int ALIGN>
__device__ __forceinline__ u64 load_tail(const u8* p, u32 len) {
    u64 v = 0;
    u32 k = 0;
    if (len >= 4) {
        v = *reinterpret_cast<const u32*>(p);
        k = 4;
    }
    for (; k < len; ++k) v |= (u64)p[k] << (8 * k);
    return v;
}

// Absorbs len bytes at p into the sponge whose next free lane is *lane
// (positions are whole lanes: every block length in the tree is a multiple
// of 8, except the message's last block, whose tail is absorbed last). The
// state is permuted as soon as the rate is full.
template <int RATE, int ALIGN>
__device__ __forceinline__ void absorb(u64 s[25], u32* lane, const u8* p, u64 len) {
    constexpr u32 LANES = RATE / 8;
    while (len >= 8) {
        if (*lane == 0 && len >= RATE) {
            // A whole rate-sized block: every lane index is a constant.
#pragma unroll
            for (u32 k = 0; k < LANES; ++k) s[k] ^= load_word<ALIGN>(p + 8 * k);
            keccak_f1600(s);
            p += RATE;
            len -= RATE;
            continue;
        }
        xor_lane(s, *lane, load_word<ALIGN>(p));
        p += 8;
        len -= 8;
        if (++*lane == LANES) {
            keccak_f1600(s);
            *lane = 0;
        }
    }
    if (len > 0) xor_lane(s, *lane, load_tail<ALIGN>(p, (u32)len));
}

// Pads a sponge that has absorbed `pos` bytes of its current block
// (pos < RATE) with the FIPS 202 domain byte DS, then permutes.
template <int RATE, u32 DS>
__device__ __forceinline__ void pad_and_permute(u64 s[25], u32 pos) {
    xor_lane(s, pos / 8, (u64)DS << (8 * (pos % 8)));
    xor_lane(s, RATE / 8 - 1, 0x8000000000000000ULL);
    keccak_f1600(s);
}

// Writes out_len bytes of output from a padded, permuted sponge; out is
// 4-byte aligned. The common case (a chaining value, CV bytes) is unrolled.
template <int RATE, int CV>
__device__ __forceinline__ void squeeze(u64 s[25], u8* out, u32 out_len) {
    if (out_len == CV) {
        u32* o = reinterpret_cast<u32*>(out);
#pragma unroll
        for (int k = 0; k < CV / 4; ++k) o[k] = (u32)(s[k / 2] >> (32 * (k % 2)));
        return;
    }
    for (u32 k = 0; k < out_len; ++k) {
        const u32 at = k % RATE;
        if (at == 0 && k > 0) keccak_f1600(s);
        out[k] = (u8)(get_lane(s, at / 8) >> (8 * (at % 8)));
    }
}
