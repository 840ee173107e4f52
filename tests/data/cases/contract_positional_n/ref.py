"""Contract fixture: solve names its length `n`, the reference calls it `N` (a C ABI is positional).

The kernel's parameters are bound by position (x -> x, y -> y, n -> N). `stops_one_short` is wrong (its
last output stays NaN); `scalar_first` puts the length first, so count matches but kinds do not: refused.
"""

shapes = {"x": ("N",), "y": ("N",)}

dim_ranges = {"N": (1, 400)}


def reference(x, y, N):
    y.copy_(3.0 * x - 1.0)
