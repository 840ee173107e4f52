// Wrong: clears num_bins + 1 elements (one past the end of counts) before counting.
extern "C" void solve(const int* values, int* counts, int N, int num_bins) {
    for (int b = 0; b <= num_bins; ++b) counts[b] = 0;
    for (int i = 0; i < N; ++i) counts[values[i]] += 1;
}
