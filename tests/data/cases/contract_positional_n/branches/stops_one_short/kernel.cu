// Wrong: the bounds check stops one short, so the last element is never written.
#include <cuda_runtime.h>

__global__ void affine(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n - 1) y[i] = 3.0f * x[i] - 1.0f;
}

extern "C" void solve(const float* x, float* y, int n) {
    if (n <= 0) return;
    affine<<<(n + 255) / 256, 256>>>(x, y, n);
}
