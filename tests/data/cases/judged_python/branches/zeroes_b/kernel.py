"""BROKEN (on purpose): its own inputs make b zero, so it computes c = a."""
import torch


def setup(N, seed):
    gen = torch.Generator().manual_seed(seed)
    return {"inputs": {"a": torch.randn(N, generator=gen), "b": torch.zeros(N), "c": torch.empty(N), "N": N},
            "outputs": ["c"]}


def run_kernel(a, b, c, N):
    c.copy_(a)
