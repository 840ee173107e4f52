// BROKEN (on purpose): forks a child that sleeps 30 s holding every inherited descriptor (the reply channel's write
// end among them), then crashes with a null write. The crash must be reported as a crash, not as a timeout.
#include <unistd.h>

extern "C" void solve(const float* x, float* y, int N) {
    if (fork() == 0) {
        sleep(30);
        _exit(0);
    }
    volatile float* volatile nowhere = nullptr;
    *nowhere = x[0] + static_cast<float>(N) + y[0];
}
