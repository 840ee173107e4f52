// BROKEN (on purpose): adds 1 from element 65536 on, so only sizes past 64 Ki elements are wrong.
extern "C" void solve(const float* a, const float* b, float* c, int N) {
    for (int i = 0; i < N; ++i) {
        c[i] = a[i] + b[i] + (i >= 65536 ? 1.0f : 0.0f);
    }
}
