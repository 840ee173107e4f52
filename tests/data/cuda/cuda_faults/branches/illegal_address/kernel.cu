// Writes 2^40 floats past c: an illegal address, reported asynchronously (sticky error).
#include <cuda_runtime.h>

__global__ void add_far(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i + (1LL << 40)] = a[i] + b[i];
}

extern "C" void solve(const float* a, const float* b, float* c, int N) {
    add_far<<<(N + 255) / 256, 256>>>(a, b, c, N);
}
