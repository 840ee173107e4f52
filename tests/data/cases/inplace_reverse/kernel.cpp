// Correct: reverses y in place.
extern "C" void solve(float* y, int N) {
    for (int i = 0, j = N - 1; i < j; ++i, --j) {
        float t = y[i];
        y[i] = y[j];
        y[j] = t;
    }
}
