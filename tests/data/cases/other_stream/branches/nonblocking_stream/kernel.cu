// BROKEN TIMING (on purpose): the same work on a non-blocking stream of its own, and solve returns at once. The
// default stream does not wait for a non-blocking stream, so the timing events around solve see none of the work.
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
    static cudaStream_t side = nullptr;
    if (side == nullptr) {
        cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
    }
    if (N <= 0) return;
    busy_wait<<<1, 1, 0, side>>>(BUSY_CYCLES);
    affine<<<(N + 255) / 256, 256, 0, side>>>(x, y, N);
}
