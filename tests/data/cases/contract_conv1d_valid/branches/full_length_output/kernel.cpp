// Wrong: one output per input element ("same" length), zero-padding the right edge: writes past out's end.
extern "C" void solve(const float* signal, const float* taps, float* out, int input_size, int kernel_size) {
    for (int i = 0; i < input_size; ++i) {
        float acc = 0.0f;
        for (int k = 0; k < kernel_size && i + k < input_size; ++k) acc += signal[i + k] * taps[k];
        out[i] = acc;
    }
}
