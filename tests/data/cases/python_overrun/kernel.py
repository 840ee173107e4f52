"""BROKEN (on purpose): computes y = 3 * x, then writes y[N] (one past the end) through y's storage.

setup() gives y a little slack in its own allocation so the overrun corrupts nothing in this process; a harness
that puts a guard zone after the output (as for C ABI kernels) sees the write.
"""
import torch


def setup(N, seed):
    gen = torch.Generator().manual_seed(seed)
    y = torch.empty(N + 16)[:N]
    return {"inputs": {"x": torch.randn(N, generator=gen), "y": y, "N": N}, "outputs": ["y"]}


def run_kernel(x, y, N):
    torch.mul(x, 3.0, out=y)
    past_the_end = torch.as_strided(y, (N + 1,), (1,), y.storage_offset())
    past_the_end[N] = 42.0
