"""Fixture: y = x. Branch `accumulates` reads y before writing it (y[i] += x[i]) although y is not
declared in `inputs`, so it is a pure output (NaN-poisoned): the harness must say so and suggest declaring it.
"""

shapes = {"x": ("N",), "y": ("N",)}

dim_ranges = {"N": (1, 300)}

inputs = {"x": ("normal", 0.0, 1.0)}


def reference(x, y, N):
    y.copy_(x)
