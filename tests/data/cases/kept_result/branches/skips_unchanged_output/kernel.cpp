// BROKEN (on purpose): returns at once when y still holds exactly what its last call wrote (as on every timed call
// after the first), without looking at x. The NaN poison and the harness's junk never match, so it computes there.
#include <cstring>
#include <vector>

static std::vector<float> last;

extern "C" void solve(const float* x, float* y, int N) {
    if (N > 0 && last.size() == static_cast<size_t>(N) && std::memcmp(y, last.data(), sizeof(float) * N) == 0) {
        return;
    }
    for (int i = 0; i < N; ++i) {
        float value = 0.0f;
        for (int step = 0; step < 64; ++step) {
            value = value * x[i] + 0.5f;
        }
        y[i] = value;
    }
    last.assign(y, y + N);
}
