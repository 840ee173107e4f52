// HONEST: sixteen independent running maxima (vectorizable), folded at the end, plus the tail.
extern "C" void solve(const float* x, float* y, int R, int C) {
    for (int r = 0; r < R; ++r) {
        const float* row = x + static_cast<long>(r) * C;
        float lanes[16];
        for (int k = 0; k < 16; ++k) lanes[k] = row[0];
        int c = 0;
        for (; c + 16 <= C; c += 16) {
            for (int k = 0; k < 16; ++k) lanes[k] = row[c + k] > lanes[k] ? row[c + k] : lanes[k];
        }
        float best = lanes[0];
        for (int k = 1; k < 16; ++k) best = lanes[k] > best ? lanes[k] : best;
        for (; c < C; ++c) best = row[c] > best ? row[c] : best;
        y[r] = best;
    }
}
