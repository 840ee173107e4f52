"""Fixture: y = 2*x + 1. Branch vec8_no_tail drops the N % 8 tail; vec8_with_tail is correct.

The default N=1000 is a multiple of 8, so the bug only shows for dims drawn by
Hypothesis (N % 8 != 0).
"""

shapes = {"x": ("N",), "y": ("N",)}

dim_ranges = {"N": (1, 2000)}

inputs = {"x": ("normal", 0.0, 1.0)}


def reference(x, y, N):
    y.copy_(2.0 * x + 1.0)


def flops(N):
    return 2 * N  # one multiply + one add per element


def bytes_moved(N):
    return 2 * 4 * N  # read x, write y (float32)
