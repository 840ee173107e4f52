// BROKEN (on purpose): skips every element whose output already holds a number (a previous call's result).
#include <cuda_runtime.h>

__global__ void lazy_affine(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && isnan(y[i])) {
        y[i] = 2.0f * x[i] + 1.0f;
    }
}

extern "C" void solve(const float* x, float* y, int N) {
    if (N <= 0) return;
    lazy_affine<<<(N + 255) / 256, 256>>>(x, y, N);
}
