// BROKEN (on purpose): asks for an N x N float workspace (4 TiB at N = 2**20), ignores that cudaMalloc failed, and
// computes y right without it. The failed allocation is the error to report: cudaErrorMemoryAllocation.
#include <cuda_runtime.h>

__global__ void affine(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = 2.0f * x[i] + 1.0f;
    }
}

extern "C" void solve(const float* x, float* y, int N) {
    if (N <= 0) return;
    float* workspace = nullptr;
    cudaMalloc(&workspace, sizeof(float) * static_cast<size_t>(N) * static_cast<size_t>(N));
    affine<<<(N + 255) / 256, 256>>>(x, y, N);
    if (workspace != nullptr) {
        cudaFree(workspace);
    }
}
