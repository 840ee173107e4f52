// Correct baseline: a ~2 ms busy wait, then y = 2*x + 1, both on the default stream.
#include <cuda_runtime.h>

// Busy-waits ~2 ms of GPU clock cycles (one thread), so that the work outlives any launch overhead.
__global__ void busy_wait(long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) {
    }
}

__global__ void affine(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = 2.0f * x[i] + 1.0f;
    }
}

static const long long BUSY_CYCLES = 4000000;  // ~2 ms at 2 GHz

extern "C" void solve(const float* x, float* y, int N) {
    if (N <= 0) return;
    busy_wait<<<1, 1>>>(BUSY_CYCLES);
    affine<<<(N + 255) / 256, 256>>>(x, y, N);
}
