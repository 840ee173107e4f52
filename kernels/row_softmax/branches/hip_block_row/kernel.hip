// HIP: one 256-thread block per row, three passes over the row (max, sum of exponentials,
// normalise), each reduction folded with wavefront shuffles and one LDS slot per wavefront.
// __expf is the hardware exponential (v_exp_f32 on AMD/DCU, MUFU.EX2 on NVIDIA).
#include <hip/hip_runtime.h>

constexpr int kBlock = 256;

__device__ inline float wave_max(float v) {
    for (int offset = warpSize / 2; offset > 0; offset >>= 1) v = fmaxf(v, __shfl_xor(v, offset));
    return v;
}

__device__ inline float wave_sum(float v) {
    for (int offset = warpSize / 2; offset > 0; offset >>= 1) v += __shfl_xor(v, offset);
    return v;
}

// Every thread returns the block-wide result. `slots` holds one value per wavefront.
template <bool kMax>
__device__ inline float block_reduce(float v, float* slots) {
    v = kMax ? wave_max(v) : wave_sum(v);
    int lane = threadIdx.x % warpSize;
    int wave = threadIdx.x / warpSize;
    int waves = kBlock / warpSize;
    if (lane == 0) slots[wave] = v;
    __syncthreads();
    float r = slots[0];
    for (int w = 1; w < waves; ++w) r = kMax ? fmaxf(r, slots[w]) : r + slots[w];
    __syncthreads();  // slots are reused by the next reduction
    return r;
}

__global__ void row_softmax_block(const float* __restrict__ x, float* __restrict__ y, int N) {
    __shared__ float slots[kBlock / 32];
    const float* xr = x + (long)blockIdx.x * N;
    float* yr = y + (long)blockIdx.x * N;
    float m = -INFINITY;
    for (int j = threadIdx.x; j < N; j += kBlock) m = fmaxf(m, xr[j]);
    m = block_reduce<true>(m, slots);
    float s = 0.0f;
    for (int j = threadIdx.x; j < N; j += kBlock) s += __expf(xr[j] - m);
    s = block_reduce<false>(s, slots);
    float inv = 1.0f / s;
    for (int j = threadIdx.x; j < N; j += kBlock) yr[j] = __expf(xr[j] - m) * inv;
}

extern "C" void solve(const float* x, float* y, int M, int N) {
    if (M <= 0 || N <= 0) return;
    hipLaunchKernelGGL(row_softmax_block, dim3(M), dim3(kBlock), 0, 0, x, y, N);
}
