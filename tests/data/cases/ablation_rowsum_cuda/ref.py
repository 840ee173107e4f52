"""Fixture (CUDA): y[m] = sum_k x[m, k], the ablation case of tools/device/loop_check.sh.

The baseline (kernel.cu) sums each row in one thread: a serial chain over K with uncoalesced loads. Branch
`block_reduce` carries two claimed methods for the `ablation` mark:

- memory.coalesced_access (switch DCUOPT_ABLATE_REAL): one block per row, neighbouring threads reading
  neighbouring elements, then a shared-memory tree. Removing it falls back to the baseline's one thread per row:
  many times slower.
- noop.placebo (switch DCUOPT_ABLATE_PLACEBO): guards code that changes nothing; removing it must show no effect.
"""
import pytest

shapes = {"x": ("M", "K"), "y": ("M",)}
dim_ranges = {"M": (1, 2048), "K": (1, 4096)}
inputs = {"x": ("uniform", -1.0, 1.0)}
atol = 1e-3
rtol = 1e-4

branch_marks = {"block_reduce": [pytest.mark.ablation(methods={"memory.coalesced_access": "-DDCUOPT_ABLATE_REAL",
                                                               "noop.placebo": "-DDCUOPT_ABLATE_PLACEBO"})]}


def reference(x, y, M, K):
    y.copy_(x.sum(dim=1))


def flops(M, K):
    return M * K  # one add per element


def bytes_moved(M, K):
    return 4 * (M * K + M)  # read x, write y (float32)
