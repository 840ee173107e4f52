// Portable HIP: the float4 branch written once for a DCU/AMD GPU (hipcc) and an NVIDIA GPU
// (nvcc with HIP's NVIDIA-platform headers, the `cuda` toolchain). Only HIP API is used.
#include <hip/hip_runtime.h>
#include <cstdint>

__global__ void vector_add_float4_hip(const float4* __restrict__ a, const float4* __restrict__ b,
                                      float4* __restrict__ c, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 x = a[i];
        float4 y = b[i];
        c[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    }
}

__global__ void vector_add_tail_hip(const float* __restrict__ a, const float* __restrict__ b,
                                    float* __restrict__ c, int start, int n) {
    int i = start + blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

extern "C" void solve(const float* a, const float* b, float* c, int N) {
    if (N <= 0) return;
    const int block = 256;
    bool aligned = ((reinterpret_cast<uintptr_t>(a) | reinterpret_cast<uintptr_t>(b) |
                     reinterpret_cast<uintptr_t>(c)) & 15) == 0;
    int n4 = aligned ? N / 4 : 0;
    if (n4 > 0) {
        hipLaunchKernelGGL(vector_add_float4_hip, dim3((n4 + block - 1) / block), dim3(block), 0, 0,
                           reinterpret_cast<const float4*>(a), reinterpret_cast<const float4*>(b),
                           reinterpret_cast<float4*>(c), n4);
    }
    int rest = N - 4 * n4;
    if (rest > 0) {
        hipLaunchKernelGGL(vector_add_tail_hip, dim3((rest + block - 1) / block), dim3(block), 0, 0,
                           a, b, c, 4 * n4, N);
    }
}
