"""Fixture (bad input): shapes gives y N - 10 elements, but the reference writes N into it."""

shapes = {"x": ("N",), "y": ("N - 10",)}


def reference(x, y, N):
    y.copy_(2.0 * x)
