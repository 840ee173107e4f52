// Cache blocking plus a register-tiled micro-kernel (the core idea of
// BLAS-style GEMM): each loaded value of a and b feeds several FMAs before it
// leaves the registers, so the loop is bound by FMA throughput rather than
// by loads/stores. Edge rows/columns that do not fill a whole register tile
// go through a plain axpy path, so any M, N, K is handled.
// Register tile: MR rows x NR columns of c (6 x 16 floats = 12 AVX2
// registers) accumulate over the k slab; per k step that is 6 broadcasts of
// a and 2 vector loads of b for 12 vector FMAs, versus 2 loads + 1 store per
// FMA in the axpy loop. Cache blocks: a KC x NC panel of b (256 KiB) stays in
// L2 while every MR-row strip of a passes over it.
enum { MR = 6, NR = 16, KC = 256, NC = 256 };

// c[0:MR, 0:NR] += a[0:MR, 0:kc] @ b[0:kc, 0:NR]   (leading dims lda/ldb/ldc)
static inline void micro_kernel(const float* __restrict__ a, int lda,
                                const float* __restrict__ b, int ldb,
                                float* __restrict__ c, int ldc, int kc) {
    float acc[MR][NR] = {};
    for (int k = 0; k < kc; ++k) {
        const float* __restrict__ bk = b + (long)k * ldb;
        for (int r = 0; r < MR; ++r) {
            const float ar = a[(long)r * lda + k];
#pragma omp simd
            for (int j = 0; j < NR; ++j) acc[r][j] += ar * bk[j];
        }
    }
    for (int r = 0; r < MR; ++r) {
#pragma omp simd
        for (int j = 0; j < NR; ++j) c[(long)r * ldc + j] += acc[r][j];
    }
}

// Generic edge path (rows [i0, i1), cols [j0, j1), k in [k0, k1)): plain
// axpy, used for the M % MR bottom rows and the N % NR right columns.
static void edge(const float* __restrict__ a, const float* __restrict__ b,
                 float* __restrict__ c, int N, int K,
                 int i0, int i1, int j0, int j1, int k0, int k1) {
    for (int i = i0; i < i1; ++i) {
        float* __restrict__ crow = c + (long)i * N;
        for (int k = k0; k < k1; ++k) {
            const float aik = a[(long)i * K + k];
            const float* __restrict__ brow = b + (long)k * N;
#pragma omp simd
            for (int j = j0; j < j1; ++j) crow[j] += aik * brow[j];
        }
    }
}

// c[0:M, :] = a[0:M, :] @ b for a block of M rows (a, c already offset).
static void matmul_regtile(const float* __restrict__ a, const float* __restrict__ b,
                           float* __restrict__ c, int M, int N, int K) {
    for (long idx = 0; idx < (long)M * N; ++idx) c[idx] = 0.0f;
    const int m_full = M - M % MR;  // rows covered by full MR-row tiles
    for (int j0 = 0; j0 < N; j0 += NC) {
        const int j1 = j0 + NC < N ? j0 + NC : N;
        const int j_full = j1 - (j1 - j0) % NR;  // cols covered by full NR tiles
        for (int k0 = 0; k0 < K; k0 += KC) {
            const int k1 = k0 + KC < K ? k0 + KC : K;
            for (int i = 0; i < m_full; i += MR) {
                for (int j = j0; j < j_full; j += NR) {
                    micro_kernel(a + (long)i * K + k0, K, b + (long)k0 * N + j, N,
                                 c + (long)i * N + j, N, k1 - k0);
                }
                edge(a, b, c, N, K, i, i + MR, j_full, j1, k0, k1);
            }
            edge(a, b, c, N, K, m_full, M, j0, j1, k0, k1);
        }
    }
}

extern "C" void solve(const float* __restrict__ a, const float* __restrict__ b,
                      float* __restrict__ c, int M, int N, int K) {
    matmul_regtile(a, b, c, M, N, K);
}
