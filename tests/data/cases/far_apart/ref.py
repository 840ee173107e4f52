"""Fixture for verdicts that must hold on a busy machine: y = 2*x + 1, where the baseline also runs a fixed chain of
16 dependent steps per element and branch `direct` does not, so `direct` is tens of times faster: far beyond the
few-fold swings of a shared CPU's load between two measurements.
"""

shapes = {"x": ("N",), "y": ("N",)}

dim_ranges = {"N": (1, 2048)}

inputs = {"x": ("normal", 0.0, 1.0)}


def reference(x, y, N):
    y.copy_(2.0 * x + 1.0)
