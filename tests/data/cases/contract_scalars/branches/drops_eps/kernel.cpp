// Wrong: eps left out (under atol at the default eps = 1e-5).
extern "C" void solve(const float* x, const float* z, float* y, float alpha, float beta, float eps, int N) {
    (void)eps;
    for (int i = 0; i < N; ++i) y[i] = alpha * x[i] + beta * z[i];
}
