// Correct, reading back: the kernel of the baseline, then one output element copied to the host with cudaMemcpy
// (as code that checks or returns a result does). A device-to-host cudaMemcpy waits for the kernel.
#include <cuda_runtime.h>

__global__ void affine(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = 2.0f * x[i] + 1.0f;
    }
}

extern "C" void solve(const float* x, float* y, int N) {
    if (N <= 0) return;
    affine<<<(N + 255) / 256, 256>>>(x, y, N);
    float first = 0.0f;
    cudaMemcpy(&first, y, sizeof(float), cudaMemcpyDeviceToHost);
    (void)first;
}
