// Wrong: copies each window into a fixed 8-element buffer and sums that: ignores x beyond 8 per window.
extern "C" void solve(const float* x, float* sums, int length, int window) {
    for (int i = 0; i + window <= length; ++i) {
        float local[8];
        int taken = window < 8 ? window : 8;
        for (int k = 0; k < taken; ++k) local[k] = x[i + k];
        float acc = 0.0f;
        for (int k = 0; k < taken; ++k) acc += local[k];
        sums[i] = acc;
    }
}
