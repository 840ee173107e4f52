"""Fixture: y = 2*x + y with y an in/out buffer (declared in `inputs`, so it starts with data, not NaN).

The reference must see y as it was *before* the kernel ran; both branches are correct.
"""

shapes = {"x": ("N",), "y": ("N",)}

dim_ranges = {"N": (1, 300)}

inputs = {"x": ("normal", 0.0, 1.0), "y": ("normal", 0.0, 1.0)}


def reference(x, y, N):
    y.add_(2.0 * x)


def bytes_moved(N):
    return 3 * 4 * N  # read x and y, write y (float32)
