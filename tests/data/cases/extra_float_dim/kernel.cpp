// Correct: y = alpha * x.
extern "C" void solve(const float* x, float* y, float alpha, int N) {
    for (int i = 0; i < N; ++i) {
        y[i] = alpha * x[i];
    }
}
