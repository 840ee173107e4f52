// Correct variant with the same parameters spelled differently: star glued to
// the name, __restrict__ on the output, trailing block comments, one line.
#include <cstdint>

extern "C" void solve(float* __restrict__ y /* output */, const float *__restrict__ x /* input */, int constant_k, int64_t n)
{
    const float k = (float)constant_k;
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) {
        y[i] = x[i] * k;
    }
}
