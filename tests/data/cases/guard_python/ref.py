"""Fixture for the timing guards on the `python` toolchain: y = 3 * x."""

dim_ranges = {"N": (1, 500)}


def reference(x, y, N):
    y.copy_(3.0 * x)
