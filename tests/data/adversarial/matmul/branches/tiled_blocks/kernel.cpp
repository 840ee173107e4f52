// HONEST: 32x32 tiles of C accumulated over 32-wide slices of K, i-k-j inside a tile.
extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    const int T = 32;
    for (long e = 0; e < static_cast<long>(M) * N; ++e) C[e] = 0.0f;
    for (int i0 = 0; i0 < M; i0 += T)
        for (int k0 = 0; k0 < K; k0 += T)
            for (int j0 = 0; j0 < N; j0 += T)
                for (int i = i0; i < i0 + T && i < M; ++i)
                    for (int k = k0; k < k0 + T && k < K; ++k) {
                        float scale = A[i * K + k];
                        for (int j = j0; j < j0 + T && j < N; ++j) C[i * N + j] += scale * B[k * N + j];
                    }
}
