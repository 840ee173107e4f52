// Eight independent scalar accumulators (manual unroll by 8) break the add
// dependency chain so several adds are in flight at once; the compiler may
// also pack them into one vector register. A scalar loop handles the N % 8 tail.
extern "C" void solve(const float* __restrict__ x, float* __restrict__ y, int M, int N) {
    for (int i = 0; i < M; ++i) {
        const float* __restrict__ row = x + (long)i * N;
        float s0 = 0.f, s1 = 0.f, s2 = 0.f, s3 = 0.f;
        float s4 = 0.f, s5 = 0.f, s6 = 0.f, s7 = 0.f;
        int j = 0;
        for (; j + 8 <= N; j += 8) {
            s0 += row[j + 0];
            s1 += row[j + 1];
            s2 += row[j + 2];
            s3 += row[j + 3];
            s4 += row[j + 4];
            s5 += row[j + 5];
            s6 += row[j + 6];
            s7 += row[j + 7];
        }
        for (; j < N; ++j) {
            s0 += row[j];
        }
        y[i] = ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7));
    }
}
