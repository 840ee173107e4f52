// BROKEN (on purpose): computes once per (x, y, N) and hands the kept result back on every later call with the same
// pointers and size, whatever x holds now. Right as long as the inputs in those buffers never change.
#include <cstring>
#include <vector>

static const float* kept_x = nullptr;
static float* kept_y = nullptr;
static int kept_n = -1;
static std::vector<float> kept;

extern "C" void solve(const float* x, float* y, int N) {
    if (x == kept_x && y == kept_y && N == kept_n) {
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
