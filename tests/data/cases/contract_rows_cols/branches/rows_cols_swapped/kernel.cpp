// Wrong: uses `rows` as the row stride (right only for square matrices).
extern "C" void solve(const float* matrix, float* sums, int rows, int cols) {
    for (int r = 0; r < rows; ++r) {
        float total = 0.0f;
        for (int c = 0; c < cols; ++c) total += matrix[r * rows + c];
        sums[r] = total;
    }
}
