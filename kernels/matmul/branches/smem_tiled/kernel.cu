// Shared-memory tiling: each 16x16 block stages a 16x16 tile of a and of b in shared memory per
// step of k, so each global element is read once per tile instead of once per output.
#include <cuda_runtime.h>

constexpr int kTile = 16;

__global__ void matmul_smem_tiled(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                                  int M, int N, int K) {
    __shared__ float as[kTile][kTile];
    __shared__ float bs[kTile][kTile + 1];
    int tx = threadIdx.x, ty = threadIdx.y;
    int i = blockIdx.y * kTile + ty;
    int j = blockIdx.x * kTile + tx;
    float s = 0.f;
    for (int k0 = 0; k0 < K; k0 += kTile) {
        as[ty][tx] = (i < M && k0 + tx < K) ? a[(long long)i * K + k0 + tx] : 0.f;
        bs[ty][tx] = (k0 + ty < K && j < N) ? b[(long long)(k0 + ty) * N + j] : 0.f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < kTile; ++k) s += as[ty][k] * bs[k][tx];
        __syncthreads();
    }
    if (i < M && j < N) c[(long long)i * N + j] = s;
}

extern "C" void solve(const float* a, const float* b, float* c, int M, int N, int K) {
    if (M <= 0 || N <= 0) return;
    dim3 block(kTile, kTile);
    dim3 grid((N + kTile - 1) / kTile, (M + kTile - 1) / kTile);
    matmul_smem_tiled<<<grid, block>>>(a, b, c, M, N, K);
}
