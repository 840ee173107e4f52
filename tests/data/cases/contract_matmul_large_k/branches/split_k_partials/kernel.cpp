// Correct: eight partial sums over interleaved k, added at the end (a different float32 summation order).
extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            float part[8] = {0, 0, 0, 0, 0, 0, 0, 0};
            for (int k = 0; k < K; ++k) part[k % 8] += A[i * K + k] * B[k * N + j];
            float acc = 0.0f;
            for (int p = 0; p < 8; ++p) acc += part[p];
            C[i * N + j] = acc;
        }
}
