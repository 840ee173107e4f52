"""Fixture for the `dcuopt` loop tests: y[m] = sum_k x[m, k], a serial baseline (tests/plugin/test_cli.py)."""
shapes = {"x": ("M", "K"), "y": ("M",)}
dim_ranges = {"M": (1, 24), "K": (1, 8192)}
inputs = {"x": ("uniform", -1.0, 1.0)}
atol = 1e-3
rtol = 1e-4


def reference(x, y, M, K):
    y.copy_(x.sum(dim=1))
