// BROKEN (on purpose): sends SIGKILL to its parent process, then waits (at most 10 s) to be killed in turn.
#include <csignal>
#include <unistd.h>

extern "C" void solve(const float* x, float* y, int N) {
    kill(getppid(), SIGKILL);
    sleep(10);
    for (int i = 0; i < N; ++i) {
        y[i] = 2.0f * x[i] + 1.0f;
    }
}
