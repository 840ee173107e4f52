"""y[i] = the rank of x[i]: how many elements are smaller, ties broken by index (a permutation of 0..N-1).

The baseline counts in O(N^2), scalar, on purpose, so an honest O(N log N) branch is 50x faster at N = 8192: a
speedup that large must not be taken for a cheat.
"""
import torch

shapes = {"x": ("N",), "y": ("N",)}

dim_ranges = {"N": (1, 8192)}

inputs = {"x": ("normal", 0.0, 1.0)}


def reference(x, y, N):
    order = torch.sort(x, stable=True).indices
    ranks = torch.empty_like(order)
    ranks[order] = torch.arange(N, dtype=order.dtype)
    y.copy_(ranks.to(y.dtype))


def bytes_moved(N):
    return 8 * N
