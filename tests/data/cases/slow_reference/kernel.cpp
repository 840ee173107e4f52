// A correct kernel: y = 2 * x.
extern "C" void solve(const float* x, float* y, int N) {
    for (int i = 0; i < N; ++i) {
        y[i] = 2.0f * x[i];
    }
}
