// GPU baseline: one thread per row, a sequential sum. Neighbouring threads read addresses
// N floats apart, so every load is a separate memory transaction.
#include <cuda_runtime.h>

__global__ void row_sum_thread_per_row(const float* x, float* y, int M, int N) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M) return;
    const float* in = x + (long long)row * N;
    float total = 0.f;
    for (int j = 0; j < N; ++j) total += in[j];
    y[row] = total;
}

extern "C" void solve(const float* x, float* y, int M, int N) {
    if (M <= 0) return;
    const int block = 128;
    row_sum_thread_per_row<<<(M + block - 1) / block, block>>>(x, y, M, N);
}
