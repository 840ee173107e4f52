// Correct, copying: cudaMemcpy device-to-device of x into y, then y = 2*y + 1 in place. CUDA does not make the
// host wait for a device-to-device cudaMemcpy, so the call stays asynchronous; the copy is device work of the call.
#include <cuda_runtime.h>

__global__ void affine_in_place(float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = 2.0f * y[i] + 1.0f;
    }
}

extern "C" void solve(const float* x, float* y, int N) {
    if (N <= 0) return;
    cudaMemcpy(y, x, sizeof(float) * (size_t)N, cudaMemcpyDeviceToDevice);
    affine_in_place<<<(N + 255) / 256, 256>>>(y, N);
}
