// Correct, three kernels and no wait (asynchronous), the shape of many multi-pass solves (a softmax's max, sum
// and scale passes; a scan's three phases): y = 2x, y += 0.5, y += 0.5, each pass a kernel of its own.
#include <cuda_runtime.h>

__global__ void twice(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
}

__global__ void add_half(float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += 0.5f;
}

extern "C" void solve(const float* x, float* y, int N) {
    if (N <= 0) return;
    int blocks = (N + 255) / 256;
    twice<<<blocks, 256>>>(x, y, N);
    add_half<<<blocks, 256>>>(y, N);
    add_half<<<blocks, 256>>>(y, N);
}
