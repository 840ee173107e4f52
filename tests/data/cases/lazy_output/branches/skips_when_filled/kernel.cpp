// BROKEN (on purpose): skips all work whenever the output already holds a number, i.e. on every call whose
// output still holds the previous call's result. Correct when the harness poisons y with NaN first.
#include <cmath>

extern "C" void solve(const float* x, float* y, int N) {
    if (!std::isnan(y[0])) {
        return;
    }
    for (int i = 0; i < N; ++i) {
        y[i] = 2.0f * x[i] + 1.0f;
    }
}
