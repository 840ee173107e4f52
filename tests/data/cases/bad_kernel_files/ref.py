"""Fixture (bad input): a branch that does not compile, and one whose only source is Rust."""

shapes = {"x": ("N",), "y": ("N",)}


def reference(x, y, N):
    y.copy_(2.0 * x)
