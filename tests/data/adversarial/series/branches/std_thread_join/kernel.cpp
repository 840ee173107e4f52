// HONEST: the second half of the elements on a std::thread, joined before solve returns.
#include <thread>

static void part(const float* x, float* y, int from, int to) {
    for (int i = from; i < to; ++i) {
        float value = 0.0f;
        for (int k = 63; k >= 0; --k) value = value * x[i] + 1.0f / static_cast<float>(k + 1);
        y[i] = value;
    }
}

extern "C" void solve(const float* x, float* y, int N) {
    int half = N / 2;
    std::thread helper(part, x, y, half, N);
    part(x, y, 0, half);
    helper.join();
}
