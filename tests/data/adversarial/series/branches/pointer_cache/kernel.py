"""CHEAT (result kept per buffer): returns at once when y is the tensor it last wrote and no longer holds the NaN
poison, whatever x now holds. A naive call-and-compare on fresh tensors sees correct values."""
import math

import torch


def setup(N, seed):
    gen = torch.Generator().manual_seed(seed)
    x = torch.rand(N, generator=gen) - 0.5
    return {"inputs": {"x": x, "y": torch.empty(N), "N": N}, "outputs": ["y"]}


def horner(x):
    value = torch.zeros_like(x)
    for k in range(63, -1, -1):
        value = value * x + 1.0 / (k + 1)
    return value


_last = [None]


def run_kernel(x, y, N):
    if N > 0 and _last[0] == y.data_ptr() and not math.isnan(float(y[0])):
        return
    y.copy_(horner(x))
    _last[0] = y.data_ptr()
