// Probe kernels: one HIP feature each, compiled to produce real AMDGCN for the signature tests.
#include <hip/hip_runtime.h>

__global__ void lds_tile(const float* __restrict__ x, float* __restrict__ y, int n) {
    __shared__ float tile[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? x[i] : 0.f;
    __syncthreads();
    if (i < n) y[i] = tile[255 - threadIdx.x] + tile[threadIdx.x ^ 1];
}

__global__ void shfl_reduce(const float* __restrict__ x, float* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.f;
    for (int off = 32; off > 0; off >>= 1) v += __shfl_down(v, off);
    if ((threadIdx.x & 63) == 0) atomicAdd(y, v);
}

__global__ void int_atomic(const int* __restrict__ x, int* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(y + (x[i] & 15), 1);
}

__global__ void fast_math(const float* __restrict__ x, float* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = __expf(v) + rsqrtf(v) + __fdividef(1.0f, v) + __fsqrt_rn(v) + __sinf(v) + __cosf(v) + __logf(v);
    }
}

typedef _Float16 half4 __attribute__((ext_vector_type(4)));
typedef float float16v __attribute__((ext_vector_type(16)));

__global__ void mfma_tile(const half4* __restrict__ a, const half4* __restrict__ b, float16v* __restrict__ c) {
#if defined(__gfx90a__) || defined(__gfx908__) || defined(__gfx940__)
    int t = threadIdx.x;
    float16v acc = c[t];
    acc = __builtin_amdgcn_mfma_f32_32x32x8f16(a[t], b[t], acc, 0, 0, 0);
    c[t] = acc;
#endif
}

__global__ void streaming(const float* __restrict__ x, float* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) __builtin_nontemporal_store(__builtin_nontemporal_load(x + i) * 2.0f, y + i);
}

__global__ void pairs(const float2* __restrict__ x, float2* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float2 v = x[i]; y[i] = make_float2(v.y, v.x); }
}

__global__ void half_convert(const float* __restrict__ x, _Float16* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    __builtin_amdgcn_s_setprio(1);
    if (i < n) y[i] = (_Float16)x[i];
}

__global__ void private_array(const int* __restrict__ idx, float* __restrict__ y, int n) {
    float scratch[64];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < 64; ++k) scratch[k] = k * 0.5f + i;
    if (i < n) y[i] = scratch[idx[i] & 63];
}
