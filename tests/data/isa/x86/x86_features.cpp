// Probe functions: one x86 feature each, compiled to produce real x86 for the signature tests.
#include <immintrin.h>
#include <atomic>

extern "C" void stream_store(const float* __restrict__ x, float* __restrict__ y, int n) {
    for (int i = 0; i + 8 <= n; i += 8) _mm256_stream_ps(y + i, _mm256_loadu_ps(x + i));
    _mm_sfence();
}

extern "C" void fast_rsqrt(const float* __restrict__ x, float* __restrict__ y, int n) {
    for (int i = 0; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_rsqrt_ps(_mm256_loadu_ps(x + i)));
    for (int i = 0; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_rcp_ps(_mm256_loadu_ps(y + i)));
}

extern "C" void atomic_count(const int* x, int n, std::atomic<int>* counter) {
    for (int i = 0; i < n; ++i) if (x[i] > 0) counter->fetch_add(1, std::memory_order_relaxed);
}

extern "C" void packed_fma(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int n) {
#pragma omp simd
    for (int i = 0; i < n; ++i) c[i] = a[i] * b[i] + c[i];
}
