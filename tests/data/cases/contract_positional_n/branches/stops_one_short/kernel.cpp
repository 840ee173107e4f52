// Wrong: the last element is never written.
extern "C" void solve(const float* x, float* y, int n) {
    for (int i = 0; i + 1 < n; ++i) y[i] = 3.0f * x[i] - 1.0f;
}
