// Refused: three parameters like the reference, but the length comes first (a scalar where x is a buffer).
#include <cuda_runtime.h>

__global__ void affine(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 3.0f * x[i] - 1.0f;
}

extern "C" void solve(int n, const float* x, float* y) {
    if (n <= 0) return;
    affine<<<(n + 255) / 256, 256>>>(x, y, n);
}
