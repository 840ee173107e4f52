// BROKEN (on purpose): right three calls out of four; every 4th call (counted across calls) writes NaN into y[0].
#include <cmath>

static int calls = 0;

extern "C" void solve(const float* x, float* y, int N) {
    for (int i = 0; i < N; ++i) {
        y[i] = 2.0f * x[i] + 1.0f;
    }
    if (++calls % 4 == 0) {
        y[0] = NAN;
    }
}
