"""Honest look-alike: c = a + b in slices of 1000 elements."""
import torch


def setup(N, seed):
    return {"inputs": {"a": torch.empty(N), "b": torch.empty(N), "c": torch.empty(N), "N": N}, "outputs": ["c"]}


def run_kernel(a, b, c, N):
    for start in range(0, N, 1000):
        torch.add(a[start:start + 1000], b[start:start + 1000], out=c[start:start + 1000])
