// Cache blocking: c is computed in BM x BN tiles, accumulating over BK-deep
// slabs of k. A BK x BN panel of b (64 KiB) stays in L2 while all BM rows of
// the tile reuse it, and each BN-wide strip of a c row (1 KiB) stays in L1
// across the k loop. The innermost loop is the same unit-stride axpy as
// ikj_simd, so it is still limited by 2 loads + 1 store per vector FMA; the
// blocking only pays off once b no longer fits in L2.
// Tiles at the right/bottom edges are clipped with min(), so any M, N, K
// (including 1 and non-multiples of the tile sizes) is handled.
enum { BM = 64, BN = 256, BK = 64 };

// c[0:M, :] = a[0:M, :] @ b for a block of M rows (a, c already offset).
static void matmul_blocked(const float* __restrict__ a, const float* __restrict__ b,
                           float* __restrict__ c, int M, int N, int K) {
    for (long idx = 0; idx < (long)M * N; ++idx) c[idx] = 0.0f;
    for (int i0 = 0; i0 < M; i0 += BM) {
        const int i1 = i0 + BM < M ? i0 + BM : M;
        for (int j0 = 0; j0 < N; j0 += BN) {
            const int j1 = j0 + BN < N ? j0 + BN : N;
            for (int k0 = 0; k0 < K; k0 += BK) {
                const int k1 = k0 + BK < K ? k0 + BK : K;
                for (int i = i0; i < i1; ++i) {
                    float* __restrict__ crow = c + (long)i * N;
                    const float* __restrict__ arow = a + (long)i * K;
                    for (int k = k0; k < k1; ++k) {
                        const float aik = arow[k];
                        const float* __restrict__ brow = b + (long)k * N;
#pragma omp simd
                        for (int j = j0; j < j1; ++j) {
                            crow[j] += aik * brow[j];
                        }
                    }
                }
            }
        }
    }
}

extern "C" void solve(const float* __restrict__ a, const float* __restrict__ b,
                      float* __restrict__ c, int M, int N, int K) {
    matmul_blocked(a, b, c, M, N, K);
}
