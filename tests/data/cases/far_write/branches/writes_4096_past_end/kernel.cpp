// BROKEN (on purpose): right inside y, plus one store 4096 elements past its end.
extern "C" void solve(const float* x, float* y, int N) {
    for (int i = 0; i < N; ++i) {
        y[i] = 2.0f * x[i] + 1.0f;
    }
    y[N + 4096] = 42.0f;
}
