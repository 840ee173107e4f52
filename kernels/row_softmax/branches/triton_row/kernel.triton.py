"""Row softmax in Triton: one program per row, the whole row in one block (next power of two >= N).

Masked lanes load -inf, so they add exp(-inf) = 0 to the sum; the row max is subtracted first.
"""
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * row_stride + cols, mask=mask, other=-float("inf"))
    shifted = x - tl.max(x, axis=0)
    numerator = tl.exp(shifted)
    tl.store(y_ptr + row * row_stride + cols, numerator / tl.sum(numerator, axis=0), mask=mask)


def solve(x, y, M, N):
    softmax_kernel[(M,)](x, y, N, x.stride(0), BLOCK=triton.next_power_of_2(N))
