// Probe kernels: one CUDA feature each, compiled to produce real SASS for the signature tests.
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <mma.h>
#include <cuda_pipeline.h>
using namespace nvcuda;

extern "C" __global__ void vec4_copy(const float4* __restrict__ x, float4* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float4 v = x[i]; y[i] = make_float4(v.x * 2.f, v.y, v.z, v.w); }
}

extern "C" __global__ void scalar_copy(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * 2.f;
}

extern "C" __global__ void smem_reduce(const float* __restrict__ x, float* __restrict__ y, int n) {
    __shared__ float tile[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? x[i] : 0.f;
    __syncthreads();
    for (int s = 128; s > 16; s >>= 1) { if (threadIdx.x < s) tile[threadIdx.x] += tile[threadIdx.x + s]; __syncthreads(); }
    float v = threadIdx.x < 32 ? tile[threadIdx.x] : 0.f;
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffff, v, off);
    if (threadIdx.x == 0) atomicAdd(y, v);
}

extern "C" __global__ void fast_math(const float* __restrict__ x, float* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float v = x[i]; y[i] = __expf(v) + rsqrtf(v) + __fdividef(1.f, v) + __sinf(v) + __logf(v); }
}

extern "C" __global__ void wmma_tile(const half* a, const half* b, float* c) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
    __shared__ half sa[256], sb[256];
    sa[threadIdx.x * 8 % 256] = a[threadIdx.x]; sb[threadIdx.x * 8 % 256] = b[threadIdx.x];
    __syncthreads();
    wmma::fill_fragment(fc, 0.f);
    wmma::load_matrix_sync(fa, sa, 16);
    wmma::load_matrix_sync(fb, sb, 16);
    wmma::mma_sync(fc, fa, fb, fc);
    wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
}

extern "C" __global__ void async_copy(const float4* __restrict__ x, float4* __restrict__ y) {
    __shared__ float4 buf[128];
    __pipeline_memcpy_async(&buf[threadIdx.x], &x[blockIdx.x * 128 + threadIdx.x], sizeof(float4));
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    y[blockIdx.x * 128 + threadIdx.x] = buf[127 - threadIdx.x];
}

extern "C" __global__ void streaming(const float* __restrict__ x, float* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) __stcs(y + i, __ldcs(x + i) * 2.f);
}

extern "C" __global__ void to_fp8(const float2* __restrict__ x, __nv_fp8x2_e4m3* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = __nv_fp8x2_e4m3(x[i]);
}

extern "C" __global__ void __launch_bounds__(1024, 2) spill_kernel(const float* __restrict__ x, float* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc[48];
#pragma unroll
    for (int k = 0; k < 48; ++k) acc[k] = x[(i + k * 977) % n];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
#pragma unroll
        for (int k = 0; k < 48; ++k) acc[k] = acc[k] * acc[(k + r + 1) % 48] + 1.0f;
    }
    float s = 0.f;
#pragma unroll
    for (int k = 0; k < 48; ++k) s += acc[k];
    y[i] = s;
}
