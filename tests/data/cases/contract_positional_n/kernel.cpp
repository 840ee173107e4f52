// Correct: y = 3x - 1, with the length spelled `n` as in many code bases.
extern "C" void solve(const float* x, float* y, int n) {
    for (int i = 0; i < n; ++i) y[i] = 3.0f * x[i] - 1.0f;
}
