// Correct: prefix sums into a cudaMalloc'd scratch buffer (one thread per output), copied out, scratch freed.
#include <cuda_runtime.h>

__global__ void prefix_sums(const float* x, float* scratch, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float running = 0.0f;
    for (int j = 0; j <= i; ++j) running += x[j];
    scratch[i] = running;
}

__global__ void copy_out(const float* scratch, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = scratch[i];
}

extern "C" void solve(const float* x, float* y, int N) {
    if (N <= 0) return;
    float* scratch = nullptr;
    if (cudaMalloc(&scratch, sizeof(float) * (size_t)N) != cudaSuccess) return;  // y stays unwritten: the check fails
    int blocks = (N + 255) / 256;
    prefix_sums<<<blocks, 256>>>(x, scratch, N);
    copy_out<<<blocks, 256>>>(scratch, y, N);
    cudaFree(scratch);
}
