// One block per row: coalesced strided reads and a shared-memory tree (memory.coalesced_access);
// -DDCUOPT_ABLATE_REAL removes it (back to one thread per row). -DDCUOPT_ABLATE_PLACEBO removes a block that
// changes nothing (noop.placebo): its ablation must show no effect.
#include <cuda_runtime.h>

constexpr int THREADS = 256;

__global__ void row_sum_block(const float* x, float* y, int M, int K) {
    __shared__ float partial[THREADS];
    const float* row = x + (long)blockIdx.x * K;
    float s = 0.0f;
    for (int k = threadIdx.x; k < K; k += THREADS) s += row[k];
#ifndef DCUOPT_ABLATE_PLACEBO
    s += 0.0f * (float)M;  // placebo: always adds zero
#endif
    partial[threadIdx.x] = s;
    __syncthreads();
    for (int half = THREADS / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0) y[blockIdx.x] = partial[0];
}

__global__ void row_sum_serial(const float* x, float* y, int M, int K) {
    int m = blockIdx.x * blockDim.x + threadIdx.x;
    if (m >= M) return;
    const float* row = x + (long)m * K;
    float s = 0.0f;
    for (int k = 0; k < K; ++k) s += row[k];
#ifndef DCUOPT_ABLATE_PLACEBO
    s += 0.0f * (float)M;
#endif
    y[m] = s;
}

extern "C" void solve(const float* x, float* y, int M, int K) {
    if (M <= 0) return;
#ifndef DCUOPT_ABLATE_REAL
    row_sum_block<<<M, THREADS>>>(x, y, M, K);
#else
    row_sum_serial<<<(M + THREADS - 1) / THREADS, THREADS>>>(x, y, M, K);
#endif
}
