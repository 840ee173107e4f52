// Baseline: three scalar passes per row (max, exp+sum, normalize).
// expf() is a libm call and the float sum may not be reassociated, so the
// middle pass is scalar and latency-bound.
#include <cmath>

extern "C" void solve(const float* x, float* y, int M, int N) {
    for (int i = 0; i < M; ++i) {
        const float* xr = x + (long)i * N;
        float* yr = y + (long)i * N;
        float m = xr[0];
        for (int j = 1; j < N; ++j) {
            if (xr[j] > m) m = xr[j];
        }
        float s = 0.0f;
        for (int j = 0; j < N; ++j) {
            float e = std::exp(xr[j] - m);
            yr[j] = e;
            s += e;
        }
        for (int j = 0; j < N; ++j) {
            yr[j] = yr[j] / s;
        }
    }
}
