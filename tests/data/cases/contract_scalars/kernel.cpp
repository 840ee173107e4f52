// Correct: y = alpha * x + beta * z + eps.
extern "C" void solve(const float* x, const float* z, float* y, float alpha, float beta, float eps, int N) {
    for (int i = 0; i < N; ++i) y[i] = alpha * x[i] + beta * z[i] + eps;
}
