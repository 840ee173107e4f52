// Source of the SASS / resource transcripts in this folder (see README.md for the commands).
// Three kernels that exercise the parsers: a templated kernel in a namespace with 16-byte
// accesses, a kernel using shared memory, and one forced to spill under -maxrregcount=32.
#include <cuda_runtime.h>

namespace dk {
template <int B>
__global__ void vadd4(const float4* __restrict__ a, const float4* __restrict__ b, float4* __restrict__ c, int n4) {
    int i = blockIdx.x * B + threadIdx.x;
    if (i < n4) {
        float4 x = a[i], y = b[i];
        c[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    }
}
}  // namespace dk

__global__ void smem_reduce(const float* x, float* out, int n) {
    __shared__ float s[256];
    s[threadIdx.x] = threadIdx.x < n ? x[threadIdx.x] : 0.f;
    __syncthreads();
    if (threadIdx.x == 0) {
        float t = 0;
        for (int i = 0; i < 256; ++i) t += s[i];
        atomicAdd(out, t);
    }
}

__global__ void spill(float* out, int n) {
    float v[96];  // 96 live values, more than -maxrregcount=32 allows: ptxas spills
#pragma unroll
    for (int i = 0; i < 96; ++i) v[i] = out[(i * 7) & 1023];
#pragma unroll 1
    for (int j = 0; j < n; ++j) {
#pragma unroll
        for (int i = 0; i < 96; ++i) v[i] = v[i] * v[(i + 1) % 96] + v[(i * 5 + 3) % 96] + 1.f;
    }
    float t = 0;
#pragma unroll
    for (int i = 0; i < 96; ++i) t += v[i];
    out[0] = t;
}

extern "C" void solve(const float* a, const float* b, float* c, int N) {
    dk::vadd4<256><<<(N / 4 + 255) / 256, 256>>>((const float4*)a, (const float4*)b, (float4*)c, N / 4);
    smem_reduce<<<1, 256>>>(a, c, N);
    spill<<<1, 1>>>(c, N);
}
