// CHEAT (precision downgrade): rounds A and B to bfloat16 (an 7-bit mantissa) before multiplying, the way a
// mixed-precision kernel would. A naive call-and-compare at rtol 2e-2 sees correct values.
#include <cstdint>
#include <cstring>
#include <vector>

static float bf16(float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    bits = (bits + 0x8000u) & ~0xFFFFu;
    std::memcpy(&v, &bits, sizeof v);
    return v;
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    std::vector<float> a(A, A + M * K), b(B, B + K * N);
    for (auto& v : a) v = bf16(v);
    for (auto& v : b) v = bf16(v);
    for (int i = 0; i < M; ++i) {
        for (int j = 0; j < N; ++j) C[i * N + j] = 0.0f;
        for (int k = 0; k < K; ++k) {
            float scale = a[i * K + k];
            for (int j = 0; j < N; ++j) C[i * N + j] += scale * b[k * N + j];
        }
    }
}
