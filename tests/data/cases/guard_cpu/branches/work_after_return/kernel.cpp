// BROKEN (on purpose): right values, but every call leaves a detached thread that works on for about 200
// milliseconds after solve returned: work outside the timed window.
#include <chrono>
#include <thread>

static void work_on() {
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
    volatile float sink = 0.0f;
    while (std::chrono::steady_clock::now() < until) {
        sink = sink + 1.0f;
    }
}

extern "C" void solve(const float* x, float* y, int N) {
    for (int i = 0; i < N; ++i) {
        y[i] = 2.0f * x[i] + 1.0f;
    }
    std::thread(work_on).detach();
}
