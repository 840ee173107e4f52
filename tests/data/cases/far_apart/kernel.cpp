// y = 2*x + 1, plus 16 dependent steps per element that change nothing: tens of times slower than `direct`.
extern "C" void solve(const float* x, float* y, int N) {
    for (int i = 0; i < N; ++i) {
        y[i] = 2.0f * x[i] + 1.0f;
    }
    volatile float sink = 0.0f;  // volatile: the compiler may not drop the extra work
    for (long k = 0, steps = 16L * N; k < steps; ++k) {
        sink = sink + 1.0f;
    }
}
