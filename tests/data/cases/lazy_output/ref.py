"""Fixture: y = 2*x + 1. Branch skips_when_filled returns at once when y[0] already holds a number (not the
NaN poison): right on every correctness call, wrong on every timed call after the first. Must be caught by the
checked calls among the timed ones and never crowned."""

shapes = {"x": ("N",), "y": ("N",)}

dim_ranges = {"N": (1, 4096)}

inputs = {"x": ("normal", 0.0, 1.0)}


def reference(x, y, N):
    y.copy_(2.0 * x + 1.0)


def bytes_moved(N):
    return 2 * 4 * N
