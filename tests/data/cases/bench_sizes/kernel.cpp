// Correct scalar baseline: c = a + b.
extern "C" void solve(const float* a, const float* b, float* c, int N) {
    for (int i = 0; i < N; ++i) {
        c[i] = a[i] + b[i];
    }
}
