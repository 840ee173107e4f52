"""y = sum_{k<64} x^k / (k + 1), a 64-term series per element (-log(1 - x) / x, truncated), on x in [-0.5, 0.5].

Heavy enough per element that computing nothing is obvious in the timings, and its declared input distribution
admits shortcuts (a closed form, fewer terms) that are wrong outside it. Timed at one size that correctness
examples never draw (`bench_sizes`), so a branch can tell the timing size apart.
"""
import torch

shapes = {"x": ("N",), "y": ("N",)}

dim_ranges = {"N": (1, 8192)}

inputs = {"x": ("uniform", -0.5, 0.5)}

# The valid domain is wider than the timed one: the series is defined for |x| < 1, and there fewer terms are far off
# (checked once at the default dims and at each benchmark size, and in the Hypothesis draws; never timed).
input_sets = {"wide": {"x": ("uniform", -0.95, 0.95)}}

bench_sizes = {"timed": {"N": 1 << 16}}

TERMS = 64


def reference(x, y, N):
    value = torch.zeros_like(x)
    for k in range(TERMS - 1, -1, -1):
        value = value * x + 1.0 / (k + 1)
    y.copy_(value)


def flops(N):
    return 2 * TERMS * N


def bytes_moved(N):
    return 8 * N
