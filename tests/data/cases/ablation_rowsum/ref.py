"""Fixture: y[m] = sum_k x[m, k]. Branch `unrolled` carries two claimed methods for the `ablation` mark:

- latency.ilp_unroll (switch DCUOPT_NO_UNROLL): eight independent accumulators instead of one serial chain. A
  float sum cannot be reordered by the compiler without -ffast-math, so removing it makes the loop latency-bound:
  several times slower.
- noop.placebo (switch DCUOPT_NO_PLACEBO): guards code that changes nothing; removing it must show no effect.
"""
import pytest

shapes = {"x": ("M", "K"), "y": ("M",)}
dim_ranges = {"M": (1, 24), "K": (1, 8192)}
inputs = {"x": ("uniform", -1.0, 1.0)}
atol = 1e-3
rtol = 1e-4

branch_marks = {"unrolled": [pytest.mark.ablation(methods={"latency.ilp_unroll": "-DDCUOPT_NO_UNROLL",
                                                           "noop.placebo": "-DDCUOPT_NO_PLACEBO"})]}


def reference(x, y, M, K):
    y.copy_(x.sum(dim=1))
