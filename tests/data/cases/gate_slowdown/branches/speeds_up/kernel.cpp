// y = 2*x + 1, plus $DCUOPT_GATE_FAST_WORK * N dependent steps of extra work (read once per process; unset: none).
#include <cstdlib>

static long extra_steps(int N) {
    static const long per_element = [] {
        const char* value = std::getenv("DCUOPT_GATE_FAST_WORK");
        return value ? std::atol(value) : 0L;
    }();
    return per_element * N;
}

extern "C" void solve(const float* x, float* y, int N) {
    for (int i = 0; i < N; ++i) {
        y[i] = 2.0f * x[i] + 1.0f;
    }
    volatile float sink = 0.0f;  // volatile: the compiler may not drop the extra work
    for (long k = 0, steps = extra_steps(N); k < steps; ++k) {
        sink = sink + 1.0f;
    }
}
