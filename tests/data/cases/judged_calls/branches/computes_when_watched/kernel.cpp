// BROKEN (on purpose): computes only when y does not start with what its last call wrote there. A checked call that
// starts from NaN poison or junk gets a full computation; a timed call (y holding the previous call's result) gets
// nothing, whatever x now holds.
#include <cmath>

static float last_first = NAN;
static float last_last = NAN;
static int last_n = -1;

extern "C" void solve(const float* x, float* y, int N) {
    if (N == last_n && N > 0 && y[0] == last_first && y[N - 1] == last_last) {
        return;
    }
    for (int i = 0; i < N; ++i) {
        float value = 0.0f;
        for (int step = 0; step < 64; ++step) {
            value = value * x[i] + 0.5f;
        }
        y[i] = value;
    }
    last_first = y[0];
    last_last = y[N - 1];
    last_n = N;
}
