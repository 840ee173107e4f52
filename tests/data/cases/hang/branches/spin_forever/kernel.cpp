// BROKEN (on purpose): never returns. The flag is volatile, so the compiler
// must re-read it every iteration and cannot remove the loop.
extern "C" void solve(const float* x, float* y, int N) {
    volatile int keep_spinning = 1;
    while (keep_spinning) {
    }
    for (int i = 0; i < N; ++i) {
        y[i] = 2.0f * x[i] + 1.0f;
    }
}
