// Row sums with eight independent accumulators (latency.ilp_unroll); -DDCUOPT_NO_UNROLL removes them.
// DCUOPT_NO_PLACEBO removes a block that changes nothing (noop.placebo): its ablation must show no effect.
extern "C" void solve(const float* x, float* y, int M, int K) {
    for (int m = 0; m < M; ++m) {
        const float* row = x + (long)m * K;
        int k = 0;
        float s = 0.0f;
#ifndef DCUOPT_NO_UNROLL
        float a[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        for (; k + 8 <= K; k += 8) {
            for (int j = 0; j < 8; ++j) a[j] += row[k + j];
        }
        s = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
#endif
#ifndef DCUOPT_NO_PLACEBO
        s += 0.0f * (float)M;  // placebo: always adds zero
#endif
        for (; k < K; ++k) s += row[k];
        y[m] = s;
    }
}
