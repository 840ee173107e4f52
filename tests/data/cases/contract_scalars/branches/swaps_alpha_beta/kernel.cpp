// Wrong: alpha and beta swapped (right whenever alpha == beta, as at the defaults).
extern "C" void solve(const float* x, const float* z, float* y, float alpha, float beta, float eps, int N) {
    for (int i = 0; i < N; ++i) y[i] = beta * x[i] + alpha * z[i] + eps;
}
