// Scalar: one float per thread, so each lane loads 4 bytes (global_load_dword / LDG.E).
#include <hip/hip_runtime.h>

__global__ void vadd_scalar(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

extern "C" void solve(const float* a, const float* b, float* c, int N) {
    if (N > 0) hipLaunchKernelGGL(vadd_scalar, dim3((N + 255) / 256), dim3(256), 0, 0, a, b, c, N);
}
