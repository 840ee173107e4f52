// BROKEN (on purpose): 4 elements per step, no remainder loop: the last N % 4 outputs are never written.
extern "C" void solve(const float* __restrict__ x, float* __restrict__ y, int N) {
    for (int i = 0; i + 4 <= N; i += 4) {
        for (int j = 0; j < 4; ++j) {
            y[i + j] = 2.0f * x[i + j] + 1.0f;
        }
    }
}
