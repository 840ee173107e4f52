"""Baseline (python toolchain): Horner's rule over the 64 coefficients on whole tensors."""
import torch


def setup(N, seed):
    gen = torch.Generator().manual_seed(seed)
    x = torch.rand(N, generator=gen) - 0.5
    return {"inputs": {"x": x, "y": torch.empty(N), "N": N}, "outputs": ["y"]}


def run_kernel(x, y, N):
    value = torch.zeros_like(x)
    for k in range(63, -1, -1):
        value = value * x + 1.0 / (k + 1)
    y.copy_(value)
