// Wrong: the copy-out kernel's bounds check stops one early, so y[N - 1] is never written.
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
    if (i + 1 < n) y[i] = scratch[i];
}

extern "C" void solve(const float* x, float* y, int N) {
    if (N <= 0) return;
    float* scratch = nullptr;
    if (cudaMalloc(&scratch, sizeof(float) * (size_t)N) != cudaSuccess) return;
    int blocks = (N + 255) / 256;
    prefix_sums<<<blocks, 256>>>(x, scratch, N);
    copy_out<<<blocks, 256>>>(scratch, y, N);
    cudaFree(scratch);
}
