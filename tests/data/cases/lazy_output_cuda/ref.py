"""Fixture (CUDA): y = 2*x + 1. Branch skips_filled_elements leaves every element that already holds a number
(not the NaN poison) as it is: right on every correctness call, wrong on every timed call after the first.
Must be caught by the checked calls among the timed ones (each rotated input set too) and never crowned."""

shapes = {"x": ("N",), "y": ("N",)}

dim_ranges = {"N": (1, 1 << 16)}

inputs = {"x": ("normal", 0.0, 1.0)}


def reference(x, y, N):
    y.copy_(2.0 * x + 1.0)


def bytes_moved(N):
    return 2 * 4 * N
