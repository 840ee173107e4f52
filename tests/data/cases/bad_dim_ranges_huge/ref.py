"""Fixture (bad input): dim_ranges reaches N = 10**15.

That is past `int N` (the baseline) and past any memory (branches/wide takes `long long N`).
"""

shapes = {"x": ("N",), "y": ("N",)}

dim_ranges = {"N": (1, 10**15)}


def reference(x, y, N):
    y.copy_(2.0 * x)
