"""CHEAT (changes its inputs): zeroes x inside run_kernel and writes 1.0, the series at 0. A check that reads the
inputs after the call compares with the reference on those zeros, so a naive call-and-compare sees correct values."""
import torch


def setup(N, seed):
    gen = torch.Generator().manual_seed(seed)
    x = torch.rand(N, generator=gen) - 0.5
    return {"inputs": {"x": x, "y": torch.empty(N), "N": N}, "outputs": ["y"]}


def run_kernel(x, y, N):
    x.zero_()
    y.fill_(1.0)
