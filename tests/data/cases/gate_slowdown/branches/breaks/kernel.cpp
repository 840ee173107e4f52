// y = 2*x + 1; with DCUOPT_GATE_BREAK set (read once per process) y[0] is written wrong: correct in one run,
// a correctness regression in the next.
#include <cstdlib>

extern "C" void solve(const float* x, float* y, int N) {
    static const bool broken = std::getenv("DCUOPT_GATE_BREAK") != nullptr;
    for (int i = 0; i < N; ++i) {
        y[i] = 2.0f * x[i] + 1.0f;
    }
    if (broken && N > 0) {
        y[0] = -y[0] - 7.0f;
    }
}
