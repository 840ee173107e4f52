// BROKEN (on purpose): memoizes on its pointers. After computing once for (x, y, N) it keeps a copy of y; a later
// call with the same pointers whose y is not the NaN poison gets that copy back, whatever x now holds. Right on
// every call whose inputs did not change since, so it passes the correctness stage and the checks with junk outputs.
#include <cmath>
#include <cstring>
#include <vector>

static const float* kept_x = nullptr;
static float* kept_y = nullptr;
static int kept_n = -1;
static std::vector<float> kept;

extern "C" void solve(const float* x, float* y, int N) {
    if (x == kept_x && y == kept_y && N == kept_n && N > 0 && !std::isnan(y[0])) {
        std::memcpy(y, kept.data(), sizeof(float) * N);
        return;
    }
    for (int i = 0; i < N; ++i) {
        float value = 0.0f;
        for (int step = 0; step < 64; ++step) {
            value = value * x[i] + 0.5f;
        }
        y[i] = value;
    }
    kept.assign(y, y + N);
    kept_x = x;
    kept_y = y;
    kept_n = N;
}
