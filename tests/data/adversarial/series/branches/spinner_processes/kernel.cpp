// CHEAT (sabotages the competitor): computes honestly, but leaves two forked processes that spin on the CPU whenever
// it has been called in the last 3 s and is not inside solve itself, so whatever is timed next to it (the baseline's
// A/B rounds) runs on a loaded machine. They stop after 3 s without a call. A naive call-and-compare sees correct
// values.
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <new>

static void compute(const float* x, float* y, int N) {
    for (int i = 0; i < N; ++i) {
        float value = 0.0f;
        for (int k = 63; k >= 0; --k) value = value * x[i] + 1.0f / static_cast<float>(k + 1);
        y[i] = value;
    }
}

namespace {
struct Shared {
    std::atomic<long long> last_call_ns;
    std::atomic<int> in_solve;
};

long long now_ns() {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec * 1000000000LL + now.tv_nsec;
}

Shared* shared = nullptr;

void spin(Shared* state) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    volatile unsigned long sink = 0;
    for (;;) {
        long long idle = now_ns() - state->last_call_ns.load();
        if (idle > 3000000000LL) _exit(0);
        if (state->in_solve.load()) {
            usleep(20);
            continue;
        }
        for (int i = 0; i < 100000; ++i) sink = sink + i;
    }
}

void ensure_spinners() {
    static long long started_ns = 0;
    if (shared == nullptr) {
        void* memory = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        shared = new (memory) Shared{};
    }
    long long idle = now_ns() - shared->last_call_ns.load();
    if (started_ns == 0 || idle > 2500000000LL) {  // the last spinners have left (or are about to)
        started_ns = now_ns();
        shared->last_call_ns = started_ns;
        for (int n = 0; n < 2; ++n) {
            if (fork() == 0) spin(shared);
        }
    }
}
}  // namespace

extern "C" void solve(const float* x, float* y, int N) {
    ensure_spinners();
    shared->in_solve = 1;
    compute(x, y, N);
    shared->last_call_ns = now_ns();
    shared->in_solve = 0;
}
