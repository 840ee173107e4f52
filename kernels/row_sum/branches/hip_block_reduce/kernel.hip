// HIP: one 256-thread block per row. Each thread sums a strided slice of the row, each wavefront
// (64 lanes on AMD/DCU, 32 on NVIDIA) folds its lanes with __shfl_down (ds_bpermute_b32 on
// AMD/DCU, no LDS round trip), and one LDS slot per wavefront combines the wavefronts.
#include <hip/hip_runtime.h>

constexpr int kBlock = 256;

__device__ inline float wave_sum(float v) {
    for (int offset = warpSize / 2; offset > 0; offset >>= 1) {
        v += __shfl_down(v, offset);
    }
    return v;
}

__global__ void row_sum_block(const float* __restrict__ x, float* __restrict__ y, int N) {
    __shared__ float partial[kBlock / 32];  // one slot per wavefront: 8 warps of 32, or 4 waves of 64
    const float* row = x + (long)blockIdx.x * N;
    float s = 0.0f;
    for (int j = threadIdx.x; j < N; j += kBlock) {
        s += row[j];
    }
    s = wave_sum(s);
    int lane = threadIdx.x % warpSize;
    int wave = threadIdx.x / warpSize;
    if (lane == 0) partial[wave] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        float total = 0.0f;
        for (int w = 0; w < kBlock / warpSize; ++w) total += partial[w];
        y[blockIdx.x] = total;
    }
}

extern "C" void solve(const float* x, float* y, int M, int N) {
    if (M <= 0) return;
    hipLaunchKernelGGL(row_sum_block, dim3(M), dim3(kBlock), 0, 0, x, y, N);
}
