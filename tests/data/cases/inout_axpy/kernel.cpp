// Correct: y = 2*x + y, y is read and written (in/out).
extern "C" void solve(const float* x, float* y, int N) {
    for (int i = 0; i < N; ++i) {
        y[i] = 2.0f * x[i] + y[i];
    }
}
