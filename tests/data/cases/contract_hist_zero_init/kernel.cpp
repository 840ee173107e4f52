// Correct: parallel atomic increments into counts, which the caller zeroed.
extern "C" void solve(const int* values, int* counts, int N, int num_bins) {
    (void)num_bins;
    #pragma omp parallel for
    for (int i = 0; i < N; ++i) __atomic_fetch_add(&counts[values[i]], 1, __ATOMIC_RELAXED);
}
