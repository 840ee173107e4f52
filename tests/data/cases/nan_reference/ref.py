"""Fixture: y = log(x) on inputs in [-1, 1], so the reference is NaN wherever x < 0."""
import torch

shapes = {"x": ("N",), "y": ("N",)}

dim_ranges = {"N": (1, 512)}

inputs = {"x": ("uniform", -1.0, 1.0)}

atol = 1e-5


def reference(x, y, N):
    y.copy_(torch.log(x))
