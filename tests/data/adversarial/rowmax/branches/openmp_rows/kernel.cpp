// HONEST: rows split over OpenMP threads (joined at the end of the parallel region), each a vectorized max.
extern "C" void solve(const float* x, float* y, int R, int C) {
#pragma omp parallel for schedule(static)
    for (int r = 0; r < R; ++r) {
        const float* row = x + static_cast<long>(r) * C;
        float best = row[0];
#pragma omp simd reduction(max : best)
        for (int c = 0; c < C; ++c) best = row[c] > best ? row[c] : best;
        y[r] = best;
    }
}
