"""Contract fixture: a histogram accumulated with atomics into a caller-zeroed buffer.

`initial` declares that `counts` starts as zeros on every call (instead of NaN poison), and the input domain
of `values` depends on a dim (every value is a valid bin). `assigns_instead_of_adds` stores 1 instead of
adding (wrong whenever a bin is hit twice); `clears_one_past` zeroes one element past the end of `counts`
(the guard after a declared-zero buffer still catches it).
"""
import torch

shapes = {"values": ("N",), "counts": ("num_bins",)}

dim_ranges = {"N": (1, 500), "num_bins": (1, 64)}

inputs = {"values": ("int", 0, "num_bins - 1")}

initial = {"counts": "zeros"}


def reference(values, counts, N, num_bins):
    counts.add_(torch.bincount(values.long(), minlength=num_bins).to(counts.dtype))
