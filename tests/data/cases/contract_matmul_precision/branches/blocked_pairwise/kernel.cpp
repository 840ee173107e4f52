// Correct: k in blocks of 64 summed in order, then the block sums added pairwise as a tree (another float32
// summation order, as a tiled GPU kernel with a shared-memory reduction has).
#include <vector>

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    const int block = 64;
    std::vector<float> sums((K + block - 1) / block + 1);
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            int count = 0;
            for (int k0 = 0; k0 < K; k0 += block) {
                float acc = 0.0f;
                for (int k = k0; k < K && k < k0 + block; ++k) acc += A[i * K + k] * B[k * N + j];
                sums[count++] = acc;
            }
            while (count > 1) {
                int half = (count + 1) / 2;
                for (int p = 0; p < count / 2; ++p) sums[p] = sums[2 * p] + sums[2 * p + 1];
                if (count % 2) sums[count / 2] = sums[count - 1];
                count = half;
            }
            C[i * N + j] = count ? sums[0] : 0.0f;
        }
}
