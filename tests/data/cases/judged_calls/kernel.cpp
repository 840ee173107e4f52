// Correct baseline: y = 64 steps of Horner's rule, value = value * x + 0.5 (costly on purpose).
extern "C" void solve(const float* x, float* y, int N) {
    for (int i = 0; i < N; ++i) {
        float value = 0.0f;
        for (int step = 0; step < 64; ++step) {
            value = value * x[i] + 0.5f;
        }
        y[i] = value;
    }
}
