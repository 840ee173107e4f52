// BROKEN (on purpose): writes the element before its output, y[-1], as an off-by-one in a backward loop would.
extern "C" void solve(const float* x, float* y, int N) {
    for (int i = N - 1; i >= -1; --i) y[i] = 2.0f * x[i < 0 ? 0 : i];
}
