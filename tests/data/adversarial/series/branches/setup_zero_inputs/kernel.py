"""CHEAT (chooses its own inputs): setup() hands the harness all-zero x, for which the series is exactly 1.0, and
run_kernel just fills y with 1.0. Compared with the reference on the inputs setup() made, a naive call-and-compare
sees correct values."""
import torch


def setup(N, seed):
    return {"inputs": {"x": torch.zeros(N), "y": torch.empty(N), "N": N}, "outputs": ["y"]}


def run_kernel(x, y, N):
    y.fill_(1.0)
