"""Fixture (bad input): reference raises whenever it is called."""

shapes = {"x": ("N",), "y": ("N",)}


def reference(x, y, N):
    raise ValueError("nope")
