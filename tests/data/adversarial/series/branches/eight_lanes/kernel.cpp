// HONEST (vectorization): eight elements advance through Horner's rule together (independent chains the compiler
// maps to SIMD lanes), with a scalar tail.
extern "C" void solve(const float* x, float* y, int N) {
    int i = 0;
    for (; i + 8 <= N; i += 8) {
        float value[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        for (int k = 63; k >= 0; --k) {
            float c = 1.0f / static_cast<float>(k + 1);
            for (int l = 0; l < 8; ++l) value[l] = value[l] * x[i + l] + c;
        }
        for (int l = 0; l < 8; ++l) y[i + l] = value[l];
    }
    for (; i < N; ++i) {
        float value = 0.0f;
        for (int k = 63; k >= 0; --k) value = value * x[i] + 1.0f / static_cast<float>(k + 1);
        y[i] = value;
    }
}
