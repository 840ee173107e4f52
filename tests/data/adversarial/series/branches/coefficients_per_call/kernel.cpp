// HONEST (caches constants inside one call): the 64 reciprocals are computed once per call into a table instead of
// a division per term and element; nothing survives the call, and nothing depends on the inputs.
extern "C" void solve(const float* x, float* y, int N) {
    float coefficient[64];
    for (int k = 0; k < 64; ++k) coefficient[k] = 1.0f / static_cast<float>(k + 1);
    for (int i = 0; i < N; ++i) {
        float value = 0.0f;
        for (int k = 63; k >= 0; --k) value = value * x[i] + coefficient[k];
        y[i] = value;
    }
}
