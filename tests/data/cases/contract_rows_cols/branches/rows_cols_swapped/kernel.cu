// Wrong: uses `rows` as the row stride (right only for square matrices).
#include <cuda_runtime.h>

__global__ void row_sums(const float* matrix, float* sums, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float total = 0.0f;
    for (int c = 0; c < cols; ++c) total += matrix[r * rows + c];
    sums[r] = total;
}

extern "C" void solve(const float* matrix, float* sums, int rows, int cols) {
    if (rows <= 0) return;
    row_sums<<<(rows + 127) / 128, 128>>>(matrix, sums, rows, cols);
}
