// Honest: the index range split across OpenMP threads; the region joins before solve returns (the pool's threads
// may spin a little after it).
extern "C" void solve(const float* x, float* y, int N) {
#pragma omp parallel for schedule(static)
    for (int i = 0; i < N; ++i) {
        y[i] = 2.0f * x[i] + 1.0f;
    }
}
