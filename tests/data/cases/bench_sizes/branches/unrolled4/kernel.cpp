// Correct: 4 elements per step with a remainder loop.
extern "C" void solve(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int N) {
    int i = 0;
    for (; i + 4 <= N; i += 4) {
        for (int j = 0; j < 4; ++j) {
            c[i + j] = a[i + j] + b[i + j];
        }
    }
    for (; i < N; ++i) {
        c[i] = a[i] + b[i];
    }
}
