"""Fixture (bad input): pytestmark holds a string, not a pytest mark."""

shapes = {"x": ("N",), "y": ("N",)}

pytestmark = ["isa"]


def reference(x, y, N):
    y.copy_(2.0 * x)
