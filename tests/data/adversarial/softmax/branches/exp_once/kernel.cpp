// HONEST: max pass, then exp computed once into the output while summing, then one multiply by the reciprocal.
#include <cmath>

extern "C" void solve(const float* x, float* y, int R, int C) {
    for (int r = 0; r < R; ++r) {
        const float* row = x + static_cast<long>(r) * C;
        float* out = y + static_cast<long>(r) * C;
        float top = row[0];
        for (int c = 1; c < C; ++c) top = row[c] > top ? row[c] : top;
        float total = 0.0f;
        for (int c = 0; c < C; ++c) total += (out[c] = std::exp(row[c] - top));
        float scale = 1.0f / total;
        for (int c = 0; c < C; ++c) out[c] *= scale;
    }
}
