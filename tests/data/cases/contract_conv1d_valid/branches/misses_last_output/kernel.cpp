// Wrong: off by one in the window count: the last full window is skipped.
extern "C" void solve(const float* signal, const float* taps, float* out, int input_size, int kernel_size) {
    for (int i = 0; i + kernel_size < input_size; ++i) {
        float acc = 0.0f;
        for (int k = 0; k < kernel_size; ++k) acc += signal[i + k] * taps[k];
        out[i] = acc;
    }
}
