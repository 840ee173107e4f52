// Correct: each row's max subtracted before exp (a row of -inf entries contributes exp(-inf) = 0).
#include <cmath>

extern "C" void solve(const float* x, float* y, int M, int N) {
    for (int i = 0; i < M; ++i) {
        const float* row = x + (long)i * N;
        float m = row[0];
        for (int j = 1; j < N; ++j) m = row[j] > m ? row[j] : m;
        float sum = 0.0f;
        for (int j = 0; j < N; ++j) sum += (y[(long)i * N + j] = std::exp(row[j] - m));
        for (int j = 0; j < N; ++j) y[(long)i * N + j] /= sum;
    }
}
