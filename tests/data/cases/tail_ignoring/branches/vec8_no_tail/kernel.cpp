// BROKEN (on purpose): processes 8 elements per step and has no remainder
// loop, so the last N % 8 elements of y are never written.
extern "C" void solve(const float* __restrict__ x, float* __restrict__ y, int N) {
    for (int i = 0; i + 8 <= N; i += 8) {
#pragma omp simd
        for (int j = 0; j < 8; ++j) {
            y[i + j] = 2.0f * x[i + j] + 1.0f;
        }
    }
}
