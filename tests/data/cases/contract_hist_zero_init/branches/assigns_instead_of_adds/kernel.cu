// Wrong: a hit bin is set to 1 instead of incremented.
#include <cuda_runtime.h>

__global__ void histogram(const int* values, int* counts, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) counts[values[i]] = 1;
}

extern "C" void solve(const int* values, int* counts, int N, int num_bins) {
    (void)num_bins;
    if (N <= 0) return;
    histogram<<<(N + 255) / 256, 256>>>(values, counts, N);
}
