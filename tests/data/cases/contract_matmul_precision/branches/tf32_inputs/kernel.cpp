// Wrong for a float32 case: A and B rounded to tf32 (a 10-bit mantissa, round to nearest even) before the float32
// products and sums, as a tensor-core TF32 matmul reads them. Right only where the case accepts tf32.
#include <cstdint>
#include <cstring>

static float tf32(float value) {
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    bits = (bits + 0xFFFu + ((bits >> 13) & 1u)) & 0xFFFFE000u;
    std::memcpy(&value, &bits, sizeof bits);
    return value;
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            float acc = 0.0f;
            for (int k = 0; k < K; ++k) acc += tf32(A[i * K + k]) * tf32(B[k * N + j]);
            C[i * N + j] = acc;
        }
}
