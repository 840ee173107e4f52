// Baseline: textbook i-j-k triple loop with a scalar dot product per c[i][j].
// The inner loop walks b down a column (stride N floats), so every b access
// touches a new cache line, and the float dot product cannot be vectorized
// without reassociation.
extern "C" void solve(const float* a, const float* b, float* c, int M, int N, int K) {
    for (int i = 0; i < M; ++i) {
        for (int j = 0; j < N; ++j) {
            float s = 0.0f;
            for (int k = 0; k < K; ++k) {
                s += a[(long)i * K + k] * b[(long)k * N + j];
            }
            c[(long)i * N + j] = s;
        }
    }
}
