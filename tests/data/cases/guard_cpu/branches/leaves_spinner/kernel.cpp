// BROKEN (on purpose): right values, but its first call leaves a child process that spins for ever, taking a core
// from whatever is timed next.
#include <unistd.h>

static bool spawned = false;

extern "C" void solve(const float* x, float* y, int N) {
    if (!spawned) {
        spawned = true;
        if (fork() == 0) {
            volatile unsigned long spin = 0;
            for (;;) {
                spin = spin + 1;
            }
        }
    }
    for (int i = 0; i < N; ++i) {
        y[i] = 2.0f * x[i] + 1.0f;
    }
}
