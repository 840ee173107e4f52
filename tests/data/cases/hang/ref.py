"""Fixture: y = 2*x + 1. Branch spin_forever never returns; ok is correct."""

shapes = {"x": ("N",), "y": ("N",)}

dim_ranges = {"N": (1, 2000)}

inputs = {"x": ("normal", 0.0, 1.0)}


def reference(x, y, N):
    y.copy_(2.0 * x + 1.0)


def flops(N):
    return 2 * N  # one multiply + one add per element


def bytes_moved(N):
    return 2 * 4 * N  # read x, write y (float32)
