// Honest look-alike: builds a table of constants at the start of every call (nothing kept between calls), then uses
// it. Must never be flagged.
extern "C" void solve(const float* x, float* y, int N) {
    float half[64];
    for (int step = 0; step < 64; ++step) {
        half[step] = 0.5f;
    }
    for (int i = 0; i < N; ++i) {
        float value = 0.0f;
        for (int step = 0; step < 64; ++step) {
            value = value * x[i] + half[step];
        }
        y[i] = value;
    }
}
