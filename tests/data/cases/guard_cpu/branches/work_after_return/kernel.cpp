// BROKEN (on purpose): right values, but a call leaves a detached thread that works on for about 300 milliseconds
// after solve returned (one such thread at a time): work outside the timed window.
#include <atomic>
#include <chrono>
#include <thread>

static std::atomic<bool> busy{false};

static void work_on() {
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
    volatile float sink = 0.0f;
    while (std::chrono::steady_clock::now() < until) {
        sink = sink + 1.0f;
    }
    busy = false;
}

extern "C" void solve(const float* x, float* y, int N) {
    for (int i = 0; i < N; ++i) {
        y[i] = 2.0f * x[i] + 1.0f;
    }
    bool idle = false;
    if (busy.compare_exchange_strong(idle, true)) {
        std::thread(work_on).detach();
    }
}
