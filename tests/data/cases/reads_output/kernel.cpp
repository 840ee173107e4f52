// Correct: y = x.
extern "C" void solve(const float* x, float* y, int N) {
    for (int i = 0; i < N; ++i) {
        y[i] = x[i];
    }
}
