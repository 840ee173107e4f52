"""c = a + b in Triton: 1024-element blocks over 4 warps, so each thread owns 4 contiguous floats.

On AMD (64-wide waves) that is 4 floats per lane: one 16-byte load per input and one 16-byte store
(buffer_load_dwordx4 / buffer_store_dwordx4 once the JIT marks the tensors as under 2 GB); on NVIDIA
LDG.E.128 / STG.E.128. The tail block is masked.
"""
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def add_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    a = tl.load(a_ptr + offsets, mask=mask)
    b = tl.load(b_ptr + offsets, mask=mask)
    tl.store(c_ptr + offsets, a + b, mask=mask)


def solve(a, b, c, N):
    add_kernel[(triton.cdiv(N, BLOCK),)](a, b, c, N, BLOCK=BLOCK, num_warps=4)
