"""Reference for a row reduction: ``y[i] = sum_j x[i, j]`` (dims M, N)."""

import pytest

shapes = {"x": ("M", "N"), "y": ("M",)}

dim_ranges = {"M": (1, 64), "N": (1, 5000)}

inputs = {"x": ("normal", 0.0, 1.0)}

# Looser atol: a float32 sum of N ~ N(0, 1) terms carries a rounding error that
# grows like sqrt(N) * eps * |partial sum| (~1e-4 at the default N=4096), and
# rows whose sum is close to 0 get no help from rtol. Reassociating branches
# (SIMD lanes, multiple accumulators) land in different places within that
# error, so 1e-4 would flag correct kernels.
atol = 1e-3
# The sum's length: the float reduction bound (8 * 2^-24 * (sum |x| + sqrt(N) * |sum x|)) on top of atol keeps a
# correct float32 kernel passing at any N (docs/usage.md, "Tolerance at size: float reductions").
reduction = "N"


def reference(x, y, M, N):
    y.copy_(x.sum(dim=1))


def flops(M, N):
    return M * N  # one add per element


def bytes_moved(M, N):
    return 4 * (M * N + M)  # read x, write y (float32)


# ISA expectations, checked by test_isa_<toolchain>[<branch>] from a build alone; see docs/isa.md.
branch_marks = {
    "hip_block_reduce": [pytest.mark.isa(
        family="amdgcn", methods=["latency.wavefront_shuffle_ds_bpermute"], max_spills=0,
        reason="the wavefront fold must use cross-lane shuffles (ds_bpermute_b32), not LDS round trips")],
    "warp_per_row": [pytest.mark.isa(
        family="sass", methods=["latency.wavefront_shuffle_ds_bpermute"], max_spills=0,
        reason="the warp fold must use SHFL")],
}
