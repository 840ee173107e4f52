"""Reference for ``c[M, N] = a[M, K] @ b[K, N]`` (row-major, dims M, N, K)."""

import pytest

shapes = {"a": ("M", "K"), "b": ("K", "N"), "c": ("M", "N")}

dim_ranges = {"M": (1, 70), "N": (1, 70), "K": (1, 70)}

inputs = {
    "a": ("normal", 0.0, 1.0),
    "b": ("normal", 0.0, 1.0),
}


# A float32 dot product of K terms rounds differently from the float64 reference: at the real size (K = 4096) a
# correct kernel is off by up to ~1e-3 where |a| @ |b| is large. `reduction = "K"` allows each element
# 8 * 2^-24 * (|a| @ |b| + sqrt(K) * |a @ b|) on top of atol + rtol * |r| (docs/usage.md, "Tolerance at size: float
# reductions"): a float32 kernel passes at any K in any summation order; one that drops or repeats a term, or rounds
# its inputs to tf32, fails.
reduction = "K"


def reference(a, b, c, M, N, K):
    c.copy_(a @ b)


def flops(M, N, K):
    return 2 * M * N * K  # one multiply + one add per (i, j, k)


def bytes_moved(M, N, K):
    return 4 * (M * K + K * N + M * N)  # read a, b once; write c once (float32)


# ISA expectations, checked by test_isa_<toolchain>[<branch>] from a build alone; see docs/isa.md.
branch_marks = {
    "hip_lds_tiled": [pytest.mark.isa(
        family="amdgcn", methods=["memory.lds_tiling"], require=[r"\bs_barrier\b"], max_spills=0,
        reason="tiles staged in LDS (ds_write + ds_read) between barriers, without spilling")],
    "smem_tiled": [pytest.mark.isa(
        family="sass", methods=["memory.lds_tiling"], max_spills=0,
        reason="tiles staged in shared memory (STS + LDS), without spilling")],
    # Triton: AOT-compiled for the target (default gfx942 with no GPU; see docs/triton.md).
    "triton_dot": [pytest.mark.isa(
        family="amdgcn", require=[r"\bv_mfma_f32_32x32x2_?f32\b", r"\bs_barrier\b"], max_spills=0,
        reason="tl.dot in IEEE fp32 is the fp32 MFMA (v_mfma_f32_32x32x2f32), tiles staged in LDS, no spills")],
}
