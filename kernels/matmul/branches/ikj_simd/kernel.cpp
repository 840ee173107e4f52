// Loop interchange to i-k-j: the inner loop now streams along a row of b and
// a row of c (unit stride) with a[i][k] held in a register, so it is an
// axpy that vectorizes cleanly (`omp simd`, __restrict__). No blocking: for
// large N*K, b is re-read from memory/L2 for every row i.
extern "C" void solve(const float* __restrict__ a, const float* __restrict__ b,
                      float* __restrict__ c, int M, int N, int K) {
    for (int i = 0; i < M; ++i) {
        float* __restrict__ crow = c + (long)i * N;
#pragma omp simd
        for (int j = 0; j < N; ++j) crow[j] = 0.0f;
        for (int k = 0; k < K; ++k) {
            const float aik = a[(long)i * K + k];
            const float* __restrict__ brow = b + (long)k * N;
#pragma omp simd
            for (int j = 0; j < N; ++j) {
                crow[j] += aik * brow[j];
            }
        }
    }
}
