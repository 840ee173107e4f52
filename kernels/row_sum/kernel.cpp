// Baseline: one sequential float accumulator per row. Without -ffast-math the
// compiler may not reassociate the additions, so this loop is neither
// vectorized nor pipelined: every add waits for the previous one (latency-bound).
extern "C" void solve(const float* x, float* y, int M, int N) {
    for (int i = 0; i < M; ++i) {
        float s = 0.0f;
        for (int j = 0; j < N; ++j) {
            s += x[(long)i * N + j];
        }
        y[i] = s;
    }
}
