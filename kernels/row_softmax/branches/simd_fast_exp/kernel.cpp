// Same passes as restrict_simd, but expf is replaced by an inlined polynomial
// so the exp+sum pass vectorizes too (the expensive pass of softmax).
#include <cstdint>

// Vectorizable expf (Cephes-style): x = n*ln2 + r with |r| <= ln2/2, exp(r)
// by a degree-6 polynomial, 2^n written straight into the exponent bits.
// Branch-free, so GCC inlines and vectorizes it; ~1-2 ulp on [-87, 88], far
// inside softmax tolerances. Here x = x - rowmax <= 0.
static inline float fast_exp(float x) {
    // Clamp x to [-87, 88] with integer min() on the bit pattern. A float
    // compare+select (x < -87 ? -87 : x, fmaxf) stops GCC 12 from vectorizing
    // this loop unless -fno-trapping-math is given; integer min does not.
    // Unsigned order: every negative float is above every positive one and
    // grows with magnitude, so this caps x from below at -87 (also -inf).
    uint32_t xu = __builtin_bit_cast(uint32_t, x);
    xu = xu < 0xC2AE0000u ? xu : 0xC2AE0000u;  // bits of -87.0f
    // Signed order: positive floats grow with value; caps x from above at 88.
    int32_t xi = (int32_t)xu;
    xi = xi < 0x42B00000 ? xi : 0x42B00000;  // bits of 88.0f
    x = __builtin_bit_cast(float, xi);
    // n = round(x / ln2) with the 1.5 * 2^23 trick: plain adds, whereas
    // floorf() is a libm call under these flags.
    const float magic = 12582912.0f;
    const float n = (x * 1.44269504088896341f + magic) - magic;
    float r = x - n * 0.693359375f;  // ln2 split in two parts for accuracy
    r = r + n * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    const int32_t bits = ((int32_t)n + 127) << 23;  // 2^n, n in [-126, 127]
    return p * __builtin_bit_cast(float, bits);
}

extern "C" void solve(const float* __restrict__ x, float* __restrict__ y, int M, int N) {
    for (int i = 0; i < M; ++i) {
        const float* __restrict__ xr = x + (long)i * N;
        float* __restrict__ yr = y + (long)i * N;
        float m = xr[0];
#pragma omp simd reduction(max : m)
        for (int j = 1; j < N; ++j) {
            m = xr[j] > m ? xr[j] : m;
        }
        float s = 0.0f;
#pragma omp simd reduction(+ : s)
        for (int j = 0; j < N; ++j) {
            float e = fast_exp(xr[j] - m);
            yr[j] = e;
            s += e;
        }
        const float inv = 1.0f / s;
#pragma omp simd
        for (int j = 0; j < N; ++j) {
            yr[j] *= inv;
        }
    }
}
