// CHEAT (computes only when watched, junk otherwise): like unwatched_skip, but in a run of calls that started from
// the NaN poison its later calls write zeros (a cheap memset) instead of the result. Only calls whose outputs are
// never read are wrong, so a naive call-and-compare sees correct values.
#include <cmath>
#include <cstring>

static void compute(const float* x, float* y, int N) {
    for (int i = 0; i < N; ++i) {
        float value = 0.0f;
        for (int k = 63; k >= 0; --k) value = value * x[i] + 1.0f / static_cast<float>(k + 1);
        y[i] = value;
    }
}

extern "C" void solve(const float* x, float* y, int N) {
    static bool unwatched = false;
    static int calls_in_run = 0;
    static float last_first = 0.0f;
    if (N <= 0) return;
    if (std::isnan(y[0])) {
        unwatched = true;
        calls_in_run = 0;
    } else if (y[0] != last_first) {  // finite values it did not write: junk, so a checked call
        unwatched = false;
    }
    if (unwatched && calls_in_run++ > 0) {
        std::memset(y, 0, sizeof(float) * N);
        last_first = 0.0f;
        return;
    }
    compute(x, y, N);
    last_first = y[0];
}
