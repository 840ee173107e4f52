// BROKEN (on purpose): a "grid" fixed at 4096 work items (the default N): y[i] for i >= 4096 is never written.
extern "C" void solve(const float* x, float* y, int N) {
    for (int i = 0; i < 4096 && i < N; ++i) {
        y[i] = 2.0f * x[i] + 1.0f;
    }
}
