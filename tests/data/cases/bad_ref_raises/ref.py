"""Fixture (bad input, issue 11): reference raises whenever it is called."""

shapes = {"x": ("N",), "y": ("N",)}


def reference(x, y, N):
    raise ValueError("nope")
