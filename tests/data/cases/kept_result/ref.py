"""Fixture: y = a costly function of x (a 64-step polynomial per element). Both branches hand back a result kept from
an earlier call instead of computing it: right on every correctness call (outputs are NaN-poisoned, so they compute)
and on the checked calls with junk outputs, wrong only when the inputs change under the same pointers. Must be caught
by the call after the last timed call on new input values, and never crowned."""

import torch

shapes = {"x": ("N",), "y": ("N",)}

dim_ranges = {"N": (1, 4096)}

inputs = {"x": ("uniform", -1.0, 1.0)}

rtol = 1e-4


def reference(x, y, N):
    value = torch.zeros_like(x)
    for _ in range(64):
        value = value * x + 0.5
    y.copy_(value)
