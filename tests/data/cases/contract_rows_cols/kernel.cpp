// Correct: sums[r] = sum over c of matrix[r][c], row-major with `cols` columns.
extern "C" void solve(const float* matrix, float* sums, int rows, int cols) {
    for (int r = 0; r < rows; ++r) {
        float total = 0.0f;
        for (int c = 0; c < cols; ++c) total += matrix[r * cols + c];
        sums[r] = total;
    }
}
