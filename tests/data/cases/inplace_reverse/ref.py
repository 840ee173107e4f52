"""Fixture: reverse y in place (y is in/out: declared in `inputs`). Correct."""

shapes = {"y": ("N",)}

dim_ranges = {"N": (2, 300)}

inputs = {"y": ("normal", 0.0, 1.0)}


def reference(y, N):
    y.copy_(y.flip(0))
