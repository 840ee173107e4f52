// Correct: each dot product split across threads by an OpenMP reduction (per-thread float32 partial sums).
extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            float acc = 0.0f;
#pragma omp parallel for reduction(+ : acc) num_threads(2)
            for (int k = 0; k < K; ++k) acc += A[i * K + k] * B[k * N + j];
            C[i * N + j] = acc;
        }
}
