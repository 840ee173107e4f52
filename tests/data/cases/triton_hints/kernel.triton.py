"""y = 2 * x, one program per row; the row start comes from a stride the kernel does not specialise on.

HINTS=True adds `tl.multiple_of(start, 4)`: the row start is a multiple of 4 floats (16 bytes; true here: the
harness passes N as the stride and the launcher only hints when N % 4 == 0), so each lane may load 4 floats.
FP8=True round-trips x through float8e4b15, a conversion gfx90a does not provide (its compile fails).
"""
import triton
import triton.language as tl

variants = {
    "hinted": {"HINTS": True},
    "hinted_no_buffer_ops": {"HINTS": True, "env": {"AMDGCN_USE_BUFFER_OPS": "0"}},
    "rejected": {"FP8": True},
}


@triton.jit(do_not_specialize=["row_stride"])
def scale_rows(x_ptr, y_ptr, n_cols, row_stride, BLOCK: tl.constexpr, HINTS: tl.constexpr, FP8: tl.constexpr):
    start = tl.program_id(0) * row_stride
    if HINTS:
        start = tl.multiple_of(start, 4)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + start + cols, mask=mask)
    if FP8:
        x = x.to(tl.float8e4b15).to(tl.float32)
    tl.store(y_ptr + start + cols, x * 2.0, mask=mask)


def solve(x, y, M, N, HINTS=False, FP8=False):
    scale_rows[(M,)](x, y, N, N, BLOCK=triton.next_power_of_2(N), HINTS=HINTS and N % 4 == 0, FP8=FP8)
