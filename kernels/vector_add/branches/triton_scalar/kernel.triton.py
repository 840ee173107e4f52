"""c = a + b in Triton with one element per thread: 256-element blocks over 4 warps of 64 (AMD).

The same kernel as triton_block1024 with a block as small as the thread count, so every lane loads
one 4-byte float per input (buffer_load_dword): the scalar shape that triton_block1024 improves on.
"""
import triton
import triton.language as tl

BLOCK = 256


@triton.jit
def add_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    a = tl.load(a_ptr + offsets, mask=mask)
    b = tl.load(b_ptr + offsets, mask=mask)
    tl.store(c_ptr + offsets, a + b, mask=mask)


def solve(a, b, c, N):
    add_kernel[(triton.cdiv(N, BLOCK),)](a, b, c, N, BLOCK=BLOCK, num_warps=4)
