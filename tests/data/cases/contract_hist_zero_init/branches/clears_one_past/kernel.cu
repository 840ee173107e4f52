// Wrong: clears num_bins + 1 elements (one past the end of counts) before counting.
#include <cuda_runtime.h>

__global__ void clear(int* counts, int n) {
    int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b < n) counts[b] = 0;
}

__global__ void histogram(const int* values, int* counts, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&counts[values[i]], 1);
}

extern "C" void solve(const int* values, int* counts, int N, int num_bins) {
    clear<<<(num_bins + 1 + 255) / 256, 256>>>(counts, num_bins + 1);
    if (N <= 0) return;
    histogram<<<(N + 255) / 256, 256>>>(values, counts, N);
}
