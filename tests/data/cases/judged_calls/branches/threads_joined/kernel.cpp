// Honest look-alike: splits the elements over two threads and joins both before returning. Must never be flagged.
#include <thread>

static void part(const float* x, float* y, int begin, int end) {
    for (int i = begin; i < end; ++i) {
        float value = 0.0f;
        for (int step = 0; step < 64; ++step) {
            value = value * x[i] + 0.5f;
        }
        y[i] = value;
    }
}

extern "C" void solve(const float* x, float* y, int N) {
    int middle = N / 2;
    std::thread first(part, x, y, 0, middle);
    std::thread second(part, x, y, middle, N);
    first.join();
    second.join();
}
