"""Fixture for the timing guards: y = 2 * x + 1 (elementwise, dim N)."""

shapes = {"x": ("N",), "y": ("N",)}
dim_ranges = {"N": (1, 300)}
inputs = {"x": ("normal", 0.0, 1.0)}


def reference(x, y, N):
    y.copy_(2.0 * x + 1.0)


def bytes_moved(N):
    return 2 * 4 * N
