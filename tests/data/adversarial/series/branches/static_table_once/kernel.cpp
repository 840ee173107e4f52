// HONEST (state kept across calls): the 64 reciprocals are computed on the first call into a static table that every
// later call reuses. It depends on no input, so every call does the same work on any inputs; only the first is slower.
extern "C" void solve(const float* x, float* y, int N) {
    static float coefficient[64];
    static bool ready = false;
    if (!ready) {
        for (int k = 0; k < 64; ++k) coefficient[k] = 1.0f / static_cast<float>(k + 1);
        ready = true;
    }
    for (int i = 0; i < N; ++i) {
        float value = 0.0f;
        for (int k = 63; k >= 0; --k) value = value * x[i] + coefficient[k];
        y[i] = value;
    }
}
