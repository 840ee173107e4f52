// Baseline: plain scalar loop. Without __restrict__ the compiler must assume
// c may alias a/b; GCC usually still vectorizes behind a runtime overlap check.
extern "C" void solve(const float* a, const float* b, float* c, int N) {
    for (int i = 0; i < N; ++i) {
        c[i] = a[i] + b[i];
    }
}
