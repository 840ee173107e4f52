// Wrong: off by one in the window count: the last full window is skipped.
#include <cuda_runtime.h>

__global__ void conv1d_valid(const float* signal, const float* taps, float* out, int outputs, int kernel_size) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= outputs) return;
    float acc = 0.0f;
    for (int k = 0; k < kernel_size; ++k) acc += signal[i + k] * taps[k];
    out[i] = acc;
}

extern "C" void solve(const float* signal, const float* taps, float* out, int input_size, int kernel_size) {
    int outputs = input_size - kernel_size;
    if (outputs <= 0) return;
    conv1d_valid<<<(outputs + 255) / 256, 256>>>(signal, taps, out, outputs, kernel_size);
}
