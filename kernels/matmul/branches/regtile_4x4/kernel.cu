// Register tiling on top of shared memory: a 64x64 tile of c per block of 256 threads, each
// thread accumulating a 4x4 sub-tile in registers from 64x16 / 16x64 tiles of a and b staged in
// shared memory (a stored transposed so the inner loop reads both operands as float4).
#include <cuda_runtime.h>

constexpr int kBM = 64, kBN = 64, kBK = 16, kTM = 4, kTN = 4;

__global__ void __launch_bounds__(256) matmul_regtile(const float* __restrict__ a, const float* __restrict__ b,
                                                      float* __restrict__ c, int M, int N, int K) {
    __shared__ __align__(16) float as[kBK][kBM];  // transposed: as[k][m]
    __shared__ __align__(16) float bs[kBK][kBN];
    const int tid = threadIdx.x;
    const int row0 = blockIdx.y * kBM, col0 = blockIdx.x * kBN;
    const int tm = (tid / (kBN / kTN)) * kTM;  // 16 x 16 threads, each 4 x 4 outputs
    const int tn = (tid % (kBN / kTN)) * kTN;
    float acc[kTM][kTN] = {};
    for (int k0 = 0; k0 < K; k0 += kBK) {
        // 64x16 of a and 16x64 of b = 1024 floats each: 4 per thread.
        for (int e = tid; e < kBM * kBK; e += 256) {
            int m = e / kBK, k = e % kBK;
            int gi = row0 + m, gk = k0 + k;
            as[k][m] = (gi < M && gk < K) ? a[(long long)gi * K + gk] : 0.f;
        }
        for (int e = tid; e < kBK * kBN; e += 256) {
            int k = e / kBN, n = e % kBN;
            int gk = k0 + k, gj = col0 + n;
            bs[k][n] = (gk < K && gj < N) ? b[(long long)gk * N + gj] : 0.f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < kBK; ++k) {
            float4 av = *reinterpret_cast<const float4*>(&as[k][tm]);
            float4 bv = *reinterpret_cast<const float4*>(&bs[k][tn]);
            float ar[kTM] = {av.x, av.y, av.z, av.w};
            float br[kTN] = {bv.x, bv.y, bv.z, bv.w};
#pragma unroll
            for (int x = 0; x < kTM; ++x)
#pragma unroll
                for (int y = 0; y < kTN; ++y) acc[x][y] += ar[x] * br[y];
        }
        __syncthreads();
    }
#pragma unroll
    for (int x = 0; x < kTM; ++x) {
        int gi = row0 + tm + x;
        if (gi >= M) continue;
#pragma unroll
        for (int y = 0; y < kTN; ++y) {
            int gj = col0 + tn + y;
            if (gj < N) c[(long long)gi * N + gj] = acc[x][y];
        }
    }
}

extern "C" void solve(const float* a, const float* b, float* c, int M, int N, int K) {
    if (M <= 0 || N <= 0) return;
    dim3 grid((N + kBN - 1) / kBN, (M + kBM - 1) / kBM);
    matmul_regtile<<<grid, 256>>>(a, b, c, M, N, K);
}
