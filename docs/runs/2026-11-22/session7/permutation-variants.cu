// Exploratory: Keccak-f[1600] with one state per warp, variants timed on
// device-resident states. nvcc -O3 -arch=sm_90 -std=c++17
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "../kernels/keccak.cuh"
#define FULL_WARP 0xffffffffu
__device__ __constant__ int KECCAK_RHO[25] = KECCAK_RHO_OFFSETS;

struct LaneRotation {
    bool swap; u32 by;
    __device__ explicit LaneRotation(int n) : swap(n >= 32), by((u32)n & 31) {}
    __device__ __forceinline__ u64 apply(u64 x) const {
        u32 lo = (u32)x, hi = (u32)(x >> 32);
        if (swap) { const u32 t = lo; lo = hi; hi = t; }
        const u32 new_hi = __funnelshift_l(lo, hi, by);
        const u32 new_lo = __funnelshift_l(hi, lo, by);
        return ((u64)new_hi << 32) | new_lo;
    }
};
__device__ __forceinline__ u64 rotl1(u64 x) {
    u32 lo = (u32)x, hi = (u32)(x >> 32);
    return ((u64)__funnelshift_l(lo, hi, 1) << 32) | __funnelshift_l(hi, lo, 1);
}

// ---- A: the shipped kernel: three shuffle levels
struct VarA {
    int theta_src[6]; int chi_src[3]; LaneRotation rho; bool first;
    __device__ VarA(u32 lane) : rho(KECCAK_RHO[lane < 25 ? lane : 0]) {
        const u32 me = lane < 25 ? lane : 0; const int x = me % 5, y = me / 5;
        for (int k = 0; k < 4; ++k) theta_src[k] = x + 5 * ((y + 1 + k) % 5);
        theta_src[4] = (x + 4) % 5 + 5 * y; theta_src[5] = (x + 1) % 5 + 5 * y;
        for (int k = 0; k < 3; ++k) { const int bx = (x + k) % 5; chi_src[k] = (3 * y + bx) % 5 + 5 * bx; }
        first = lane == 0;
    }
    __device__ __forceinline__ u64 perm(u64 a) const {
#pragma unroll
        for (int round = 0; round < 24; ++round) {
            u64 c = a;
#pragma unroll
            for (int k = 0; k < 4; ++k) c ^= __shfl_sync(FULL_WARP, a, theta_src[k]);
            const u64 left = __shfl_sync(FULL_WARP, c, theta_src[4]);
            const u64 right = __shfl_sync(FULL_WARP, c, theta_src[5]);
            a ^= left ^ rotl64(right, 1);
            a = rho.apply(a);
            const u64 b0 = __shfl_sync(FULL_WARP, a, chi_src[0]);
            const u64 b1 = __shfl_sync(FULL_WARP, a, chi_src[1]);
            const u64 b2 = __shfl_sync(FULL_WARP, a, chi_src[2]);
            a = b0 ^ (~b1 & b2);
            if (first) a ^= KECCAK_RC[round];
        }
        return a;
    }
};


// ---- A2: A, with theta's right neighbour fetched first and iota folded into
// chi's first source as soon as it arrives.
struct VarA2 : VarA {
    __device__ VarA2(u32 lane) : VarA(lane) {}
    __device__ __forceinline__ u64 perm(u64 a) const {
#pragma unroll
        for (int round = 0; round < 24; ++round) {
            u64 c = a;
#pragma unroll
            for (int k = 0; k < 4; ++k) c ^= __shfl_sync(FULL_WARP, a, theta_src[k]);
            const u64 right = __shfl_sync(FULL_WARP, c, theta_src[5]);
            const u64 left = __shfl_sync(FULL_WARP, c, theta_src[4]);
            a ^= left ^ rotl64(right, 1);
            a = rho.apply(a);
            const u64 rc = first ? KECCAK_RC[round] : 0;
            const u64 b0 = __shfl_sync(FULL_WARP, a, chi_src[0]) ^ rc;
            const u64 b1 = __shfl_sync(FULL_WARP, a, chi_src[1]);
            const u64 b2 = __shfl_sync(FULL_WARP, a, chi_src[2]);
            a = b0 ^ (~b1 & b2);
        }
        return a;
    }
};

// ---- B: two shuffle levels: column parities, then the three chi sources'
// raw lanes and all five parities; theta and rho applied by the receiver.
struct VarB {
    int col_src[4]; int par_src[5]; int chi_src[3]; LaneRotation rho[3]; bool first;
    __device__ static int src(u32 me, int k) { const int x = me % 5, y = me / 5; const int bx = (x + k) % 5; return (3 * y + bx) % 5 + 5 * bx; }
    __device__ VarB(u32 lane) : rho{LaneRotation(KECCAK_RHO[src(lane < 25 ? lane : 0, 0)]), LaneRotation(KECCAK_RHO[src(lane < 25 ? lane : 0, 1)]), LaneRotation(KECCAK_RHO[src(lane < 25 ? lane : 0, 2)])} {
        const u32 me = lane < 25 ? lane : 0; const int x = me % 5, y = me / 5;
        for (int k = 0; k < 4; ++k) col_src[k] = x + 5 * ((y + 1 + k) % 5);
        for (int k = 0; k < 3; ++k) chi_src[k] = src(me, k);
        const int c0 = (3 * y + x) % 5;  // column of chi source 0
        for (int j = 0; j < 5; ++j) par_src[j] = (c0 + j + 4) % 5 + 5 * y;  // columns c0-1 .. c0+3
        first = lane == 0;
    }
    __device__ __forceinline__ u64 perm(u64 a) const {
#pragma unroll
        for (int round = 0; round < 24; ++round) {
            u64 c = a;
#pragma unroll
            for (int k = 0; k < 4; ++k) c ^= __shfl_sync(FULL_WARP, a, col_src[k]);
            u64 p[5], s[3];
#pragma unroll
            for (int k = 0; k < 3; ++k) s[k] = __shfl_sync(FULL_WARP, a, chi_src[k]);
#pragma unroll
            for (int j = 0; j < 5; ++j) p[j] = __shfl_sync(FULL_WARP, c, par_src[j]);
            u64 b[3];
#pragma unroll
            for (int k = 0; k < 3; ++k) b[k] = rho[k].apply(s[k] ^ p[k] ^ rotl1(p[k + 2]));
            a = b[0] ^ (~b[1] & b[2]);
            if (first) a ^= KECCAK_RC[round];
        }
        return a;
    }
};


// ---- B2: B with the chi sources' raw lanes fetched first, before the
// column level (they do not depend on it); B3 also folds iota into lane 0's
// first source (rho of lane 0 is 0).
template <bool FOLD_IOTA>
struct VarB2T : VarB {
    __device__ VarB2T(u32 lane) : VarB(lane) {}
    __device__ __forceinline__ u64 perm(u64 a) const {
#pragma unroll
        for (int round = 0; round < 24; ++round) {
            u64 s[3];
#pragma unroll
            for (int k = 0; k < 3; ++k) s[k] = __shfl_sync(FULL_WARP, a, chi_src[k]);
            u64 c = a;
#pragma unroll
            for (int k = 0; k < 4; ++k) c ^= __shfl_sync(FULL_WARP, a, col_src[k]);
            if (FOLD_IOTA && first) s[0] ^= KECCAK_RC[round];
            u64 p[5];
#pragma unroll
            for (int j = 0; j < 5; ++j) p[j] = __shfl_sync(FULL_WARP, c, par_src[j]);
            u64 b[3];
#pragma unroll
            for (int k = 0; k < 3; ++k) b[k] = rho[k].apply(s[k] ^ p[k] ^ rotl1(p[k + 2]));
            a = b[0] ^ (~b[1] & b[2]);
            if (!FOLD_IOTA && first) a ^= KECCAK_RC[round];
        }
        return a;
    }
};
typedef VarB2T<false> VarB2;
typedef VarB2T<true> VarB3;

// ---- C: like B, but the sender rotates its own raw lane by its rho while
// the parities are gathered; the receiver rotates only the parity term.
struct VarC {
    int col_src[4]; int par_src[5]; int chi_src[3]; LaneRotation own; LaneRotation rho[3]; bool first;
    __device__ VarC(u32 lane) : own(KECCAK_RHO[lane < 25 ? lane : 0]), rho{LaneRotation(KECCAK_RHO[VarB::src(lane < 25 ? lane : 0, 0)]), LaneRotation(KECCAK_RHO[VarB::src(lane < 25 ? lane : 0, 1)]), LaneRotation(KECCAK_RHO[VarB::src(lane < 25 ? lane : 0, 2)])} {
        const u32 me = lane < 25 ? lane : 0; const int x = me % 5, y = me / 5;
        for (int k = 0; k < 4; ++k) col_src[k] = x + 5 * ((y + 1 + k) % 5);
        for (int k = 0; k < 3; ++k) chi_src[k] = VarB::src(me, k);
        const int c0 = (3 * y + x) % 5;
        for (int j = 0; j < 5; ++j) par_src[j] = (c0 + j + 4) % 5 + 5 * y;
        first = lane == 0;
    }
    __device__ __forceinline__ u64 perm(u64 a) const {
#pragma unroll
        for (int round = 0; round < 24; ++round) {
            u64 c = a;
#pragma unroll
            for (int k = 0; k < 4; ++k) c ^= __shfl_sync(FULL_WARP, a, col_src[k]);
            const u64 ra = own.apply(a);
            u64 p[5], s[3];
#pragma unroll
            for (int k = 0; k < 3; ++k) s[k] = __shfl_sync(FULL_WARP, ra, chi_src[k]);
#pragma unroll
            for (int j = 0; j < 5; ++j) p[j] = __shfl_sync(FULL_WARP, c, par_src[j]);
            u64 b[3];
#pragma unroll
            for (int k = 0; k < 3; ++k) b[k] = s[k] ^ rho[k].apply(p[k] ^ rotl1(p[k + 2]));
            a = b[0] ^ (~b[1] & b[2]);
            if (first) a ^= KECCAK_RC[round];
        }
        return a;
    }
};

// ---- D: B with the sender's D: after the column level, every lane also
// fetches its neighbour columns (as A does) -- no: D keeps A's structure but
// fetches theta's neighbour parities together with the column (ten-lane theta).
struct VarD {
    int t_src[14]; int chi_src[3]; LaneRotation rho; bool first;
    __device__ VarD(u32 lane) : rho(KECCAK_RHO[lane < 25 ? lane : 0]) {
        const u32 me = lane < 25 ? lane : 0; const int x = me % 5, y = me / 5;
        for (int k = 0; k < 5; ++k) t_src[k] = (x + 4) % 5 + 5 * k;
        for (int k = 0; k < 5; ++k) t_src[5 + k] = (x + 1) % 5 + 5 * k;
        for (int k = 0; k < 3; ++k) { const int bx = (x + k) % 5; chi_src[k] = (3 * y + bx) % 5 + 5 * bx; }
        first = lane == 0;
    }
    __device__ __forceinline__ u64 perm(u64 a) const {
#pragma unroll
        for (int round = 0; round < 24; ++round) {
            u64 l = 0, r = 0;
#pragma unroll
            for (int k = 0; k < 5; ++k) l ^= __shfl_sync(FULL_WARP, a, t_src[k]);
#pragma unroll
            for (int k = 0; k < 5; ++k) r ^= __shfl_sync(FULL_WARP, a, t_src[5 + k]);
            a ^= l ^ rotl1(r);
            a = rho.apply(a);
            const u64 b0 = __shfl_sync(FULL_WARP, a, chi_src[0]);
            const u64 b1 = __shfl_sync(FULL_WARP, a, chi_src[1]);
            const u64 b2 = __shfl_sync(FULL_WARP, a, chi_src[2]);
            a = b0 ^ (~b1 & b2);
            if (first) a ^= KECCAK_RC[round];
        }
        return a;
    }
};

template <class V>
__global__ void __launch_bounds__(32) warp_kernel(u64* states, int perms) {
    const u32 lane = threadIdx.x;
    const V v(lane);
    const u32 me = lane < 25 ? lane : 0;
    u64 a = states[blockIdx.x * 25 + me];
    for (int i = 0; i < perms; ++i) {
        if (lane == 1) a ^= (u64)i;  // stands in for absorbed data
        a = v.perm(a);
    }
    if (lane < 25) states[blockIdx.x * 25 + lane] = a;
}

__global__ void thread_kernel(u64* states, int leaves, int perms) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= leaves) return;
    u64 s[25];
    for (int w = 0; w < 25; ++w) s[w] = states[t * 25 + w];
    for (int i = 0; i < perms; ++i) { s[1] ^= (u64)i; keccak_f1600(s); }
    for (int w = 0; w < 25; ++w) states[t * 25 + w] = s[w];
}

// latency probes
__global__ void shfl_chain(u32* out, int n, long long* cycles) {
    u32 v = threadIdx.x; long long t0 = clock64();
    for (int i = 0; i < n; ++i) v = __shfl_sync(FULL_WARP, v, (threadIdx.x + 1 + (v & 0)) % 32);
    long long t1 = clock64(); out[threadIdx.x] = v; if (threadIdx.x == 0) *cycles = t1 - t0;
}
__global__ void lop_chain(u32* out, int n, long long* cycles, u32 k) {
    u32 v = threadIdx.x, w = threadIdx.x * 7; long long t0 = clock64();
    for (int i = 0; i < n; ++i) { v = v ^ (~w & k); w = w ^ v; }
    long long t1 = clock64(); out[threadIdx.x] = v + w; if (threadIdx.x == 0) *cycles = t1 - t0;
}


template <int N>
__global__ void shfl_fan(u32* out, int n, long long* cycles) {
    u32 v = threadIdx.x; long long t0 = clock64();
    for (int i = 0; i < n; ++i) {
        u32 acc = v;
#pragma unroll
        for (int k = 0; k < N; ++k) acc ^= __shfl_sync(FULL_WARP, v, (threadIdx.x + 1 + 3 * k) % 32);
        v = acc;
    }
    long long t1 = clock64(); out[threadIdx.x] = v; if (threadIdx.x == 0) *cycles = t1 - t0;
}

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1);} } while (0)

int main(int argc, char** argv) {
    const int perms = argc > 1 ? atoi(argv[1]) : 20000;
    int clock_khz; CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
    cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
    printf("%s, %d SMs, clock %d MHz, %d permutations per leaf\n", prop.name, prop.multiProcessorCount, clock_khz / 1000, perms);
    { u32* o; long long* c; CK(cudaMalloc(&o, 128)); CK(cudaMalloc(&c, 8)); long long h;
      shfl_chain<<<1, 32>>>(o, 10000, c); CK(cudaMemcpy(&h, c, 8, cudaMemcpyDeviceToHost));
      printf("shfl dependent chain: %.1f cycles each\n", h / 10000.0);
      lop_chain<<<1, 32>>>(o, 10000, c, 5); CK(cudaMemcpy(&h, c, 8, cudaMemcpyDeviceToHost));
      auto fan = [&](auto kern, int N) { kern<<<1, 32>>>(o, 10000, c); CK(cudaMemcpy(&h, c, 8, cudaMemcpyDeviceToHost));
          printf("%2d independent shfl then xor: %.1f cycles per step\n", N, h / 10000.0); };
      fan(shfl_fan<1>, 1); fan(shfl_fan<2>, 2); fan(shfl_fan<4>, 4); fan(shfl_fan<8>, 8); fan(shfl_fan<16>, 16);
      printf("lop3+xor chain step: %.1f cycles (two dependent ops)\n", h / 10000.0); }
    int leaf_counts[] = {16, 64, 256, 1024};
    for (int L : leaf_counts) {
        std::vector<u64> init(25 * (size_t)L);
        u64 x = 0x9e3779b97f4a7c15ULL * (L + 1);
        for (auto& w : init) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; w = x; }
        u64 *ref, *st; CK(cudaMalloc(&ref, init.size() * 8)); CK(cudaMalloc(&st, init.size() * 8));
        cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
        auto timeit = [&](auto launch) { float best = 1e30f; for (int r = 0; r < 3; ++r) {
            CK(cudaMemcpy(st, init.data(), init.size() * 8, cudaMemcpyHostToDevice));
            CK(cudaEventRecord(e0)); launch(); CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1));
            float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); if (ms < best) best = ms; } return best; };
        float tms = timeit([&] { thread_kernel<<<(L + 127) / 128, 128>>>(st, L, perms); });
        CK(cudaMemcpy(ref, st, init.size() * 8, cudaMemcpyDeviceToDevice));
        std::vector<u64> want(init.size()); CK(cudaMemcpy(want.data(), ref, want.size() * 8, cudaMemcpyDeviceToHost));
        auto report = [&](const char* name, float ms) {
            std::vector<u64> got(init.size()); CK(cudaMemcpy(got.data(), st, got.size() * 8, cudaMemcpyDeviceToHost));
            const bool ok = got == want;
            const double ns = ms * 1e6 / perms;
            printf("L=%5d %-8s %8.3f ms  %7.1f ns/perm  %6.1f cycles/round  %.2f x thread  %s\n", L, name, ms, ns,
                   ns * clock_khz / 1e6 / 24, tms / ms, ok ? "ok" : "WRONG");
        };
        report("thread", tms);
        report("A", timeit([&] { warp_kernel<VarA><<<L, 32>>>(st, perms); }));
        report("A2", timeit([&] { warp_kernel<VarA2><<<L, 32>>>(st, perms); }));
        report("B", timeit([&] { warp_kernel<VarB><<<L, 32>>>(st, perms); }));
        report("B2", timeit([&] { warp_kernel<VarB2><<<L, 32>>>(st, perms); }));
        report("B3", timeit([&] { warp_kernel<VarB3><<<L, 32>>>(st, perms); }));
        report("C", timeit([&] { warp_kernel<VarC><<<L, 32>>>(st, perms); }));
        report("D", timeit([&] { warp_kernel<VarD><<<L, 32>>>(st, perms); }));
        CK(cudaFree(ref)); CK(cudaFree(st));
    }
    return 0;
}
