// BROKEN (on purpose): indexes a with row stride N instead of K. Identical to
// the baseline when N == K (e.g. square M = N = K); wrong rows of a are read
// otherwise (for N > K this also reads past the end of a, by at most
// (M - 1) * (N - K) floats, which stays small for the fixture's dim_ranges).
extern "C" void solve(const float* a, const float* b, float* c, int M, int N, int K) {
    for (int i = 0; i < M; ++i) {
        for (int j = 0; j < N; ++j) {
            float s = 0.0f;
            for (int k = 0; k < K; ++k) {
                s += a[i * N + k] * b[k * N + j];
            }
            c[i * N + j] = s;
        }
    }
}
