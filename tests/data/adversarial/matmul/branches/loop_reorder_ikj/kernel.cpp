// HONEST: the i-k-j order: the inner loop walks rows of B and C contiguously (vectorizable). Same sums, reordered.
extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    for (int i = 0; i < M; ++i) {
        for (int j = 0; j < N; ++j) C[i * N + j] = 0.0f;
        for (int k = 0; k < K; ++k) {
            float scale = A[i * K + k];
            for (int j = 0; j < N; ++j) C[i * N + j] += scale * B[k * N + j];
        }
    }
}
