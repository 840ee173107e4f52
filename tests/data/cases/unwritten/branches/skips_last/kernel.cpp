// BROKEN (on purpose): off-by-one loop bound, y[N-1] is never written.
extern "C" void solve(const float* x, float* y, int N) {
    for (int i = 0; i < N - 1; ++i) {
        y[i] = 2.0f * x[i] + 1.0f;
    }
}
