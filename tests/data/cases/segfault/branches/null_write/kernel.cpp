// BROKEN (on purpose): writes through a null pointer -> SIGSEGV.
// The pointer itself is volatile, so the compiler cannot prove it is null
// (no __builtin_trap / SIGILL substitution) and must emit the store.
extern "C" void solve(const float* x, float* y, int N) {
    volatile float* volatile p = nullptr;
    *p = x[0];
    for (int i = 0; i < N; ++i) {
        y[i] = 2.0f * x[i] + 1.0f;
    }
}
