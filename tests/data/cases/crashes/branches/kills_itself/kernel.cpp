// BROKEN (on purpose): the worker is killed by SIGKILL, as by the out-of-memory killer.
#include <signal.h>
extern "C" void solve(const float* x, float* y, int N) {
    raise(SIGKILL);
    for (int i = 0; i < N; ++i) y[i] = 2.0f * x[i];
}
