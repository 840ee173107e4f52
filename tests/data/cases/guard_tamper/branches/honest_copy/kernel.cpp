// Honest: reads its environment and opens nothing; writes only its output.
#include <cstdlib>

extern "C" void solve(const float* x, float* y, int N) {
    const char* unused = getenv("PYTHONPATH");
    (void)unused;
    for (int i = 0; i < N; ++i) {
        y[i] = 2.0f * x[i] + 1.0f;
    }
}
