// Baseline: counts, for every element, the elements smaller than it (ties by index): O(N^2), and kept scalar on
// purpose (vectorization off), so that an honest O(N log N) branch is 50x faster.
#pragma GCC optimize("no-tree-vectorize")

extern "C" void solve(const float* x, int* y, int N) {
    for (int i = 0; i < N; ++i) {
        int rank = 0;
        for (int j = 0; j < N; ++j) rank += (x[j] < x[i]) | ((x[j] == x[i]) & (j < i));
        y[i] = rank;
    }
}
