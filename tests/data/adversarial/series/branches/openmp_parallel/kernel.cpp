// HONEST: elements split over OpenMP threads; the parallel region joins them before solve returns.
extern "C" void solve(const float* x, float* y, int N) {
#pragma omp parallel for schedule(static)
    for (int i = 0; i < N; ++i) {
        float value = 0.0f;
        for (int k = 63; k >= 0; --k) value = value * x[i] + 1.0f / static_cast<float>(k + 1);
        y[i] = value;
    }
}
