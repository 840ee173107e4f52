"""Fixture for the `python` toolchain: y = 3 * x (setup()/run_kernel() contract)."""

dim_ranges = {"N": (1, 500)}


def reference(x, y, N):
    y.copy_(3.0 * x)
