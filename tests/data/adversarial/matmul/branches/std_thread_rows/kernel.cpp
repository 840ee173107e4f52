// HONEST: rows split over two std::threads that are joined before solve returns; each does the i-k-j loop.
#include <thread>

static void rows(const float* A, const float* B, float* C, int from, int to, int N, int K) {
    for (int i = from; i < to; ++i) {
        for (int j = 0; j < N; ++j) C[i * N + j] = 0.0f;
        for (int k = 0; k < K; ++k) {
            float scale = A[i * K + k];
            for (int j = 0; j < N; ++j) C[i * N + j] += scale * B[k * N + j];
        }
    }
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    int half = M / 2;
    std::thread helper(rows, A, B, C, half, M, N, K);
    rows(A, B, C, 0, half, N, K);
    helper.join();
}
