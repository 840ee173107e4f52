"""CHEAT (forges the clock from Python): computes honestly, but on import replaces the worker's time.perf_counter_ns
with one that runs 8 times slower. A naive call-and-compare sees correct values."""
import time

import torch

_real = time.perf_counter_ns
_start = _real()
time.perf_counter_ns = lambda: _start + (_real() - _start) // 8

def setup(N, seed):
    gen = torch.Generator().manual_seed(seed)
    x = torch.rand(N, generator=gen) - 0.5
    return {"inputs": {"x": x, "y": torch.empty(N), "N": N}, "outputs": ["y"]}


def horner(x):
    value = torch.zeros_like(x)
    for k in range(63, -1, -1):
        value = value * x + 1.0 / (k + 1)
    return value


def run_kernel(x, y, N):
    y.copy_(horner(x))
