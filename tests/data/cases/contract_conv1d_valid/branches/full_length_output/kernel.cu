// Wrong: one output per input element ("same" length), zero-padding the right edge: writes past out's end.
#include <cuda_runtime.h>

__global__ void conv1d_same(const float* signal, const float* taps, float* out, int input_size, int kernel_size) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= input_size) return;
    float acc = 0.0f;
    for (int k = 0; k < kernel_size && i + k < input_size; ++k) acc += signal[i + k] * taps[k];
    out[i] = acc;
}

extern "C" void solve(const float* signal, const float* taps, float* out, int input_size, int kernel_size) {
    if (input_size <= 0) return;
    conv1d_same<<<(input_size + 255) / 256, 256>>>(signal, taps, out, input_size, kernel_size);
}
