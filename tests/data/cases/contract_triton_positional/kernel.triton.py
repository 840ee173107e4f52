import triton
import triton.language as tl


@triton.jit
def combine(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(c_ptr + offsets, tl.load(a_ptr + offsets, mask=mask) - 2.0 * tl.load(b_ptr + offsets, mask=mask),
             mask=mask)


def solve(a, b, c, n, BLOCK=128):
    combine[(triton.cdiv(n, BLOCK),)](a, b, c, n, BLOCK=BLOCK)
