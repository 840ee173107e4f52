// Grid-stride loop: a fixed grid (8 blocks of 256 per multiprocessor) walks the whole array,
// instead of one thread per element. Fewer blocks to schedule; the same 4-byte accesses.
#include <cuda_runtime.h>

__global__ void vector_add_grid_stride(const float* __restrict__ a, const float* __restrict__ b,
                                       float* __restrict__ c, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        c[i] = a[i] + b[i];
    }
}

static int multiprocessors() {
    static int count = 0;
    if (count == 0) {
        int device = 0;
        cudaGetDevice(&device);
        cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device);
        if (count <= 0) count = 1;
    }
    return count;
}

extern "C" void solve(const float* a, const float* b, float* c, int N) {
    if (N <= 0) return;
    const int block = 256;
    int blocks = multiprocessors() * 8;
    int needed = (N + block - 1) / block;
    vector_add_grid_stride<<<blocks < needed ? blocks : needed, block>>>(a, b, c, N);
}
