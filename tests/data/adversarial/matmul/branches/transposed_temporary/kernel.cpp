// HONEST: allocates a transposed copy of B for this call (freed on return), then contiguous dot products.
#include <cstddef>
#include <vector>

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    std::vector<float> bt(static_cast<std::size_t>(N) * K);
    for (int k = 0; k < K; ++k)
        for (int j = 0; j < N; ++j) bt[j * K + k] = B[k * N + j];
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            float sum = 0.0f;
            for (int k = 0; k < K; ++k) sum += A[i * K + k] * bt[j * K + k];
            C[i * N + j] = sum;
        }
}
