"""Wrong on purpose: the store mask lets 3 elements past the end of c through (the loads stay in bounds)."""
import triton
import triton.language as tl


@triton.jit
def add_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    loaded = offsets < n
    total = tl.load(a_ptr + offsets, mask=loaded, other=0.0) + tl.load(b_ptr + offsets, mask=loaded, other=0.0)
    tl.store(c_ptr + offsets, total, mask=offsets < n + 3)


def solve(a, b, c, N):
    add_kernel[(triton.cdiv(N + 3, 256),)](a, b, c, N, BLOCK=256)
