// Scalar on purpose: vectorization is switched off for this function, so the adds are addss.
extern "C" __attribute__((optimize("no-tree-vectorize"))) void solve(const float* a, const float* b, float* c,
                                                                     int N) {
    for (int i = 0; i < N; ++i) c[i] = a[i] + b[i];
}
