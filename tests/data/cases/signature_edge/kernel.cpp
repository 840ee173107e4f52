// Correct kernel with parser edge cases in its signature: pointer star next
// to the name, __restrict__, comments inside the parameter list, a scalar
// named like a keyword prefix (constant_k), and a 64-bit size.
#include <cstdint>

extern "C" void solve(float *y,                    // output
                      const float* __restrict__ x, /* input */
                      int constant_k,              /* scalar, a dim */
                      int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        y[i] = x[i] * (float)constant_k;
    }
}
