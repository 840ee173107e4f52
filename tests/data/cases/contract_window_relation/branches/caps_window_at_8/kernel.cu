// Wrong: copies each window into a fixed 8-element register buffer and sums that: ignores x beyond 8 per window.
#include <cuda_runtime.h>

__global__ void moving_sums(const float* x, float* sums, int windows, int window) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= windows) return;
    float local[8];
    int taken = window < 8 ? window : 8;
    for (int k = 0; k < taken; ++k) local[k] = x[i + k];
    float acc = 0.0f;
    for (int k = 0; k < taken; ++k) acc += local[k];
    sums[i] = acc;
}

extern "C" void solve(const float* x, float* sums, int length, int window) {
    int windows = length - window + 1;
    if (windows <= 0) return;
    moving_sums<<<(windows + 255) / 256, 256>>>(x, sums, windows, window);
}
