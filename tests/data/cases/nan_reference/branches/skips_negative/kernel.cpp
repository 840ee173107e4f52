// BROKEN (on purpose): never writes y where x < 0, where the reference is NaN.
#include <math.h>
extern "C" void solve(const float* x, float* y, int N) {
    for (int i = 0; i < N; ++i) {
        if (x[i] >= 0.0f) y[i] = logf(x[i]);
    }
}
