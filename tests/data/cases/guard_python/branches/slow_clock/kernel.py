"""BROKEN (on purpose): right values, but it makes the worker's nanosecond clock run 50x slow, so every timed call
looks 50x faster than it is."""
import time

import torch

_real = time.perf_counter_ns
_origin = _real()
time.perf_counter_ns = lambda: _origin + (_real() - _origin) // 50


def setup(N, seed):
    gen = torch.Generator().manual_seed(seed)
    return {"inputs": {"x": torch.randn(N, generator=gen), "y": torch.empty(N), "N": N}, "outputs": ["y"]}


def run_kernel(x, y, N):
    torch.mul(x, 3.0, out=y)
