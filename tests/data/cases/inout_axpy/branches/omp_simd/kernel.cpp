// Correct: the same in/out update, vectorized.
extern "C" void solve(const float* __restrict__ x, float* __restrict__ y, int N) {
#pragma omp simd
    for (int i = 0; i < N; ++i) {
        y[i] += 2.0f * x[i];
    }
}
