// Correct: one thread per window, sums[i] = x[i] + ... + x[i + window - 1].
#include <cuda_runtime.h>

__global__ void moving_sums(const float* x, float* sums, int windows, int window) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= windows) return;
    float acc = 0.0f;
    for (int k = 0; k < window; ++k) acc += x[i + k];
    sums[i] = acc;
}

extern "C" void solve(const float* x, float* sums, int length, int window) {
    int windows = length - window + 1;
    if (windows <= 0) return;
    moving_sums<<<(windows + 255) / 256, 256>>>(x, sums, windows, window);
}
