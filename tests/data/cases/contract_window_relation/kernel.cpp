// Correct: sums[i] = x[i] + ... + x[i + window - 1].
extern "C" void solve(const float* x, float* sums, int length, int window) {
    for (int i = 0; i + window <= length; ++i) {
        float acc = 0.0f;
        for (int k = 0; k < window; ++k) acc += x[i + k];
        sums[i] = acc;
    }
}
