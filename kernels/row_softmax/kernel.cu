// GPU baseline: one thread per row, three passes over the row (max, sum of exp, write).
// Neighbouring threads read addresses N floats apart, so no load is coalesced.
#include <cuda_runtime.h>

__global__ void softmax_thread_per_row(const float* x, float* y, int M, int N) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M) return;
    const float* in = x + (long long)row * N;
    float* out = y + (long long)row * N;
    float peak = -INFINITY;
    for (int j = 0; j < N; ++j) peak = fmaxf(peak, in[j]);
    float total = 0.f;
    for (int j = 0; j < N; ++j) total += expf(in[j] - peak);
    float scale = 1.f / total;
    for (int j = 0; j < N; ++j) out[j] = expf(in[j] - peak) * scale;
}

extern "C" void solve(const float* x, float* y, int M, int N) {
    if (M <= 0 || N <= 0) return;
    const int block = 128;
    softmax_thread_per_row<<<(M + block - 1) / block, block>>>(x, y, M, N);
}
