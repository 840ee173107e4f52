// A correct kernel: y = log(x), NaN where x < 0 (written, as every element must be).
#include <math.h>
extern "C" void solve(const float* x, float* y, int N) {
    for (int i = 0; i < N; ++i) y[i] = logf(x[i]);
}
