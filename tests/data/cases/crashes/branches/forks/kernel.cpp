// BROKEN (on purpose): forks, and both processes return from solve() into the harness.
#include <unistd.h>
extern "C" void solve(const float* x, float* y, int N) {
    for (int i = 0; i < N; ++i) y[i] = 2.0f * x[i];
    fork();
}
