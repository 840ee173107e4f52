// BROKEN (on purpose): accumulates into y, reading y before it is written; y is not declared in `inputs`.
extern "C" void solve(const float* x, float* y, int N) {
    for (int i = 0; i < N; ++i) {
        y[i] += x[i];
    }
}
