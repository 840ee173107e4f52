// BROKEN (on purpose): closes every file descriptor, the harness's reply pipe and log among them.
#include <unistd.h>
extern "C" void solve(const float* x, float* y, int N) {
    for (int i = 0; i < N; ++i) y[i] = 2.0f * x[i];
    for (int fd = 0; fd < 1024; ++fd) close(fd);
}
