// Correct: 8 elements per step, then a scalar loop for the N % 8 tail.
extern "C" void solve(const float* __restrict__ x, float* __restrict__ y, int N) {
    int i = 0;
    for (; i + 8 <= N; i += 8) {
#pragma omp simd
        for (int j = 0; j < 8; ++j) {
            y[i + j] = 2.0f * x[i + j] + 1.0f;
        }
    }
    for (; i < N; ++i) {
        y[i] = 2.0f * x[i] + 1.0f;
    }
}
