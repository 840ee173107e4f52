// y = 2*x + 1, then a chain of dependent steps whose length sets the time; $DCUOPT_GATE_SLOW_PERCENT=p makes the
// chain p% longer (read once per process; unset: 0).
#include <cstdlib>

static const long BASE_STEPS = 400000;

static long chain_steps() {
    static const long steps = [] {
        const char* value = std::getenv("DCUOPT_GATE_SLOW_PERCENT");
        const double percent = value ? std::atof(value) : 0.0;
        return static_cast<long>(BASE_STEPS * (1.0 + percent / 100.0) + 0.5);
    }();
    return steps;
}

extern "C" void solve(const float* x, float* y, int N) {
    for (int i = 0; i < N; ++i) {
        y[i] = 2.0f * x[i] + 1.0f;
    }
    volatile float sink = 0.0f;  // volatile: the compiler may not drop the chain
    for (long k = 0, steps = chain_steps(); k < steps; ++k) {
        sink = sink + 1.0f;
    }
}
