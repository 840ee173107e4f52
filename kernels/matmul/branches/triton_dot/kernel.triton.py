"""c = a @ b in Triton: one program per BLOCK_M x BLOCK_N tile of c, accumulating BLOCK_K-deep `tl.dot`s in fp32.

Edges are masked (the loads fill 0 beyond M, N, K). `tl.dot` runs in IEEE fp32 (`input_precision="ieee"`), so the
result is exact float32 arithmetic on every GPU (the default, TF32 on NVIDIA, rounds the inputs to 10-bit
mantissas) and in Triton's CPU interpreter.

Variants (each one a branch `triton_dot@<name>`, no copied file): an autotune-style config (`m128_n64_k32_w8_s3`)
and `hinted`, which tells the compiler that each tile's row and column offsets are BLOCK-aligned runs of
consecutive indices (`tl.multiple_of` + `tl.max_contiguous`, the form Triton's matmul tutorial uses).
"""
import triton
import triton.language as tl

configs = [triton.Config({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32}, num_warps=8, num_stages=3)]
variants = {"hinted": {"HINTS": True}}


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, HINTS: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    if HINTS:
        offs_m = tl.max_contiguous(tl.multiple_of(offs_m, BLOCK_M), BLOCK_M)
        offs_n = tl.max_contiguous(tl.multiple_of(offs_n, BLOCK_N), BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        ks = k * BLOCK_K + offs_k
        a = tl.load(a_ptr + offs_m[:, None] * stride_am + ks[None, :],
                    mask=(offs_m[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(b_ptr + ks[:, None] * stride_bk + offs_n[None, :],
                    mask=(ks[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], acc, mask=mask)


def solve(a, b, c, M, N, K, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, num_warps=4, num_stages=2, HINTS=False):
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), b.stride(0), c.stride(0), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
                        BLOCK_K=BLOCK_K, HINTS=HINTS, num_warps=num_warps, num_stages=num_stages)
