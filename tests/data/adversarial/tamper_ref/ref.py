"""y = sum_{k<64} x^k / (k + 1), a 64-term series per element (-log(1 - x) / x, truncated), on x in [-0.5, 0.5].

Tamper fixture: the same series, small; its cheats compute honestly and attack files the harness trusts.
"""
import torch

shapes = {"x": ("N",), "y": ("N",)}

dim_ranges = {"N": (1, 8192)}

inputs = {"x": ("uniform", -0.5, 0.5)}


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
