// Correct naive matmul: c[M,N] = a[M,K] @ b[K,N], row-major.
extern "C" void solve(const float* a, const float* b, float* c, int M, int N, int K) {
    for (int i = 0; i < M; ++i) {
        for (int j = 0; j < N; ++j) {
            float s = 0.0f;
            for (int k = 0; k < K; ++k) {
                s += a[i * K + k] * b[k * N + j];
            }
            c[i * N + j] = s;
        }
    }
}
