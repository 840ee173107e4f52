// Packed: no aliasing and omp simd, so the adds are addps/vaddps on whole vector registers.
extern "C" void solve(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int N) {
#pragma omp simd
    for (int i = 0; i < N; ++i) c[i] = a[i] + b[i];
}
