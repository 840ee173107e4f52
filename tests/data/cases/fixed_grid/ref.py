"""Fixture: y = 2*x + 1. Branch grid_4096 emulates a fixed launch grid sized for the default N = 4096: elements
past 4096 are never written. Only dims above the default expose it, so they must be checked deterministically
(the top of dim_ranges and default + 1), not left to chance.
"""

shapes = {"x": ("N",), "y": ("N",)}

dim_ranges = {"N": (1, 16384)}

inputs = {"x": ("normal", 0.0, 1.0)}


def reference(x, y, N):
    y.copy_(2.0 * x + 1.0)
