#include <hip/hip_runtime.h>

// 64 live accumulators under a 32-VGPR cap: the register allocator must spill.
__global__ __attribute__((amdgpu_num_vgpr(32))) void spill_kernel(const float* __restrict__ x, float* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc[64];
#pragma unroll
    for (int k = 0; k < 64; ++k) acc[k] = x[(i + k * 977) % n];
    float s = 0.f;
#pragma unroll
    for (int r = 0; r < 8; ++r) {
#pragma unroll
        for (int k = 0; k < 64; ++k) acc[k] = acc[k] * acc[(k + r + 1) % 64] + 1.0f;
    }
#pragma unroll
    for (int k = 0; k < 64; ++k) s += acc[k];
    y[i] = s;
}

extern "C" void solve(const float* x, float* y, int N) {
    if (N > 0) hipLaunchKernelGGL(spill_kernel, dim3((N + 255) / 256), dim3(256), 0, 0, x, y, N);
}
