// `omp simd reduction(+:s)` explicitly allows reassociation: the compiler keeps
// one partial sum per vector lane and combines them at the end. Turns the
// latency-bound chain into a bandwidth-bound stream.
extern "C" void solve(const float* __restrict__ x, float* __restrict__ y, int M, int N) {
    for (int i = 0; i < M; ++i) {
        const float* __restrict__ row = x + (long)i * N;
        float s = 0.0f;
#pragma omp simd reduction(+ : s)
        for (int j = 0; j < N; ++j) {
            s += row[j];
        }
        y[i] = s;
    }
}
