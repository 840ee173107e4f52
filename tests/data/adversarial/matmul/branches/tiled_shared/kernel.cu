// HONEST (CUDA): 16x16 tiles of A and B staged through shared memory, float32 throughout.
#include <cuda_runtime.h>

__global__ void tiled(const float* A, const float* B, float* C, int M, int N, int K) {
    __shared__ float a[16][16], b[16][16];
    int i = blockIdx.y * 16 + threadIdx.y, j = blockIdx.x * 16 + threadIdx.x;
    float sum = 0.0f;
    for (int k0 = 0; k0 < K; k0 += 16) {
        a[threadIdx.y][threadIdx.x] = i < M && k0 + threadIdx.x < K ? A[i * K + k0 + threadIdx.x] : 0.0f;
        b[threadIdx.y][threadIdx.x] = j < N && k0 + threadIdx.y < K ? B[(k0 + threadIdx.y) * N + j] : 0.0f;
        __syncthreads();
        for (int k = 0; k < 16; ++k) sum += a[threadIdx.y][k] * b[k][threadIdx.x];
        __syncthreads();
    }
    if (i < M && j < N) C[i * N + j] = sum;
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    if (M <= 0 || N <= 0) return;
    tiled<<<dim3((N + 15) / 16, (M + 15) / 16), dim3(16, 16)>>>(A, B, C, M, N, K);
}
