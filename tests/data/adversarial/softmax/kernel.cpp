// Baseline: three passes per row (max, sum of exp, scale), exp computed twice.
#include <cmath>

extern "C" void solve(const float* x, float* y, int R, int C) {
    for (int r = 0; r < R; ++r) {
        const float* row = x + static_cast<long>(r) * C;
        float* out = y + static_cast<long>(r) * C;
        float top = row[0];
        for (int c = 1; c < C; ++c) top = std::fmax(top, row[c]);
        float total = 0.0f;
        for (int c = 0; c < C; ++c) total += std::exp(row[c] - top);
        for (int c = 0; c < C; ++c) out[c] = std::exp(row[c] - top) / total;
    }
}
