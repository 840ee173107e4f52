"""Fixture: y = 2*x + 1. Branch drops_tail handles 4 elements per step and drops the N % 4 tail: right at the
default N = 1000 (so it can be timed), wrong for drawn N with N % 4 != 0. Its failure must survive the xdist merge.
"""

shapes = {"x": ("N",), "y": ("N",)}

dim_ranges = {"N": (1, 2000)}

inputs = {"x": ("normal", 0.0, 1.0)}


def reference(x, y, N):
    y.copy_(2.0 * x + 1.0)


def bytes_moved(N):
    return 2 * 4 * N
