// Correct: prefix sums into a heap scratch buffer, copied out, scratch freed.
extern "C" void solve(const float* x, float* y, int N) {
    float* scratch = new float[N];
    float running = 0.0f;
    for (int i = 0; i < N; ++i) {
        running += x[i];
        scratch[i] = running;
    }
    for (int i = 0; i < N; ++i) y[i] = scratch[i];
    delete[] scratch;
}
