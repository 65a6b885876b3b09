// Exploratory: the leaf kernels of kernels/*.cu, compiled by nvcc, timed on
// device-resident data like benches/gpu.rs's table. Variants in namespaces.
#include <cstdio>
#include <cstdlib>
#include <vector>
#define TREEHASH_RATE 136
#define TREEHASH_CV 32
#define TREEHASH_DS 0x06
#define TREEHASH_THREADS_PER_BLOCK 128
#include "../kernels/keccak.cuh"
namespace va {
#include "fl_a.tmp.cu"
}
namespace vb {
#include "../kernels/few_leaves.cu"
}
#ifdef VARIANT_C
namespace vc {
#include VARIANT_C
}
#endif
using namespace vb;
#include "../kernels/treehash.cu"

template <int V>
__global__ void __launch_bounds__(TREEHASH_THREADS_PER_BLOCK)
    warpk(u64* s, u64 L, const u8* d, u64 len, u64 fb, u64 bs) {
    if (V == 0) va::absorb_leaves_warp_impl<136>(s, L, d, len, fb, bs);
    if (V == 1) vb::absorb_leaves_warp_impl<136>(s, L, d, len, fb, bs);
#ifdef VARIANT_C
    if (V == 2) vc::absorb_leaves_warp_impl<136>(s, L, d, len, fb, bs);
#endif
}

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1);} } while (0)

int main() {
    const u64 bs = 136;
    for (u64 L : {16ull, 64ull, 256ull, 1024ull}) {
        u64 len = (L << 23) < (2ull << 30) ? (L << 23) : (2ull << 30);
        len -= len % bs;
        std::vector<u8> host(len);
        for (u64 i = 0; i < len; ++i) host[i] = (u8)((u32)(i * 2654435761u) >> 13);
        u8* d; u64* st; CK(cudaMalloc(&d, len)); CK(cudaMalloc(&st, 25 * L * 8));
        CK(cudaMemcpy(d, host.data(), len, cudaMemcpyHostToDevice));
        cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
        std::vector<u64> want(25 * L), got(25 * L);
        auto run = [&](int which) {
            float ms[4];
            for (int r = 0; r < 4; ++r) {
                CK(cudaMemset(st, 0, 25 * L * 8));
                CK(cudaEventRecord(e0));
                if (which < 0) absorb_leaves<<<(L + 127) / 128, 128>>>(st, L, d, len, 0, bs);
                else if (which == 0) warpk<0><<<L, 32>>>(st, L, d, len, 0, bs);
                else if (which == 1) warpk<1><<<L, 32>>>(st, L, d, len, 0, bs);
#ifdef VARIANT_C
                else warpk<2><<<L, 32>>>(st, L, d, len, 0, bs);
#endif
                CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1));
                CK(cudaEventElapsedTime(&ms[r], e0, e1));
            }
            float a = ms[1], b = ms[2], c = ms[3];
            float med = a > b ? (b > c ? b : (a > c ? c : a)) : (a > c ? a : (b > c ? c : b));
            CK(cudaMemcpy(got.data(), st, got.size() * 8, cudaMemcpyDeviceToHost));
            return len / (med * 1e6);
        };
        const double t = run(-1); want = got;
        printf("L=%5llu thread %6.2f GB/s", L, t);
        const char* names[] = {"A", "B", "C"};
        int n = 2;
#ifdef VARIANT_C
        n = 3;
#endif
        for (int v = 0; v < n; ++v) {
            const double g = run(v);
            printf(" | %s %6.2f GB/s %.2f x %s", names[v], g, g / t, got == want ? "ok" : "WRONG");
        }
        printf("\n");
        CK(cudaFree(d)); CK(cudaFree(st));
    }
}
