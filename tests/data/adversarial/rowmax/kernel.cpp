// Baseline: one running maximum per row, element by element.
extern "C" void solve(const float* x, float* y, int R, int C) {
    for (int r = 0; r < R; ++r) {
        float best = x[static_cast<long>(r) * C];
        for (int c = 1; c < C; ++c) best = x[static_cast<long>(r) * C + c] > best ? x[static_cast<long>(r) * C + c] : best;
        y[r] = best;
    }
}
