// Wrong on purpose: eight accumulators but no remainder loop, so rows with K % 8 != 0 lose their tail.
extern "C" void solve(const float* x, float* y, int M, int K) {
    for (int m = 0; m < M; ++m) {
        const float* row = x + (long)m * K;
        float a[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        for (int k = 0; k + 8 <= K; k += 8) {
            for (int j = 0; j < 8; ++j) a[j] += row[k + j];
        }
        y[m] = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
    }
}
