// One block per row, the row read from global memory once: it is kept in shared memory (16-byte
// loads when the row is float4-aligned), max and sum use warp shuffles plus a shared-memory
// combine across the block's warps. Rows too long for shared memory are re-read from global.
#include <cstdint>
#include <cuda_runtime.h>

constexpr int kThreads = 256;
constexpr int kMaxSharedFloats = 12 * 1024;  // 48 KiB: the default dynamic shared memory limit

__device__ __forceinline__ float block_reduce(float v, bool is_max, float* scratch) {
    for (int offset = 16; offset > 0; offset >>= 1) {
        float other = __shfl_xor_sync(0xffffffffu, v, offset);
        v = is_max ? fmaxf(v, other) : v + other;
    }
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    __syncthreads();  // scratch may still be read by the previous reduction
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    v = lane < kThreads / 32 ? scratch[lane] : (is_max ? -INFINITY : 0.f);
    for (int offset = 16; offset > 0; offset >>= 1) {
        float other = __shfl_xor_sync(0xffffffffu, v, offset);
        v = is_max ? fmaxf(v, other) : v + other;
    }
    return v;
}

__global__ void softmax_block_smem_row(const float* __restrict__ x, float* __restrict__ y, int N, int cached) {
    extern __shared__ float row_cache[];
    __shared__ float scratch[kThreads / 32];
    const float* in = x + (long long)blockIdx.x * N;
    float* out = y + (long long)blockIdx.x * N;
    const bool vector = cached && (N % 4 == 0) &&
                        (((reinterpret_cast<uintptr_t>(in) | reinterpret_cast<uintptr_t>(out)) & 15) == 0);
    float peak = -INFINITY;
    if (vector) {
        const float4* in4 = reinterpret_cast<const float4*>(in);
        float4* cache4 = reinterpret_cast<float4*>(row_cache);
        for (int j = threadIdx.x; j < N / 4; j += kThreads) {
            float4 v = in4[j];
            cache4[j] = v;
            peak = fmaxf(peak, fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w)));
        }
    } else {
        for (int j = threadIdx.x; j < N; j += kThreads) {
            float v = in[j];
            if (cached) row_cache[j] = v;
            peak = fmaxf(peak, v);
        }
    }
    peak = block_reduce(peak, true, scratch);
    const float* source = cached ? row_cache : in;
    float total = 0.f;
    for (int j = threadIdx.x; j < N; j += kThreads) total += __expf(source[j] - peak);
    float scale = 1.f / block_reduce(total, false, scratch);
    if (vector) {
        const float4* cache4 = reinterpret_cast<const float4*>(row_cache);
        float4* out4 = reinterpret_cast<float4*>(out);
        for (int j = threadIdx.x; j < N / 4; j += kThreads) {
            float4 v = cache4[j];
            out4[j] = make_float4(__expf(v.x - peak) * scale, __expf(v.y - peak) * scale,
                                  __expf(v.z - peak) * scale, __expf(v.w - peak) * scale);
        }
    } else {
        for (int j = threadIdx.x; j < N; j += kThreads) out[j] = __expf(source[j] - peak) * scale;
    }
}

extern "C" void solve(const float* x, float* y, int M, int N) {
    if (M <= 0 || N <= 0) return;
    int cached = N <= kMaxSharedFloats;
    size_t shared = cached ? sizeof(float) * N : 0;
    softmax_block_smem_row<<<M, kThreads, shared>>>(x, y, N, cached);
}
