// BROKEN (on purpose): ends the process with exit(0) in the middle of the call.
#include <stdlib.h>
extern "C" void solve(const float* x, float* y, int N) {
    for (int i = 0; i < N; ++i) y[i] = 2.0f * x[i];
    exit(0);
}
