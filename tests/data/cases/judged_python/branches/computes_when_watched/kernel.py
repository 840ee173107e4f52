"""BROKEN (on purpose): computes only when c does not start with what its last call wrote there (checked calls start
from NaN poison or junk; timed calls leave its own result), whatever a and b now hold."""
import torch

_last = {}


def setup(N, seed):
    return {"inputs": {"a": torch.empty(N), "b": torch.empty(N), "c": torch.empty(N), "N": N}, "outputs": ["c"]}


def run_kernel(a, b, c, N):
    if _last.get(c.data_ptr()) == (float(c[0]), float(c[-1])):
        return
    torch.add(a, b, out=c)
    _last[c.data_ptr()] = (float(c[0]), float(c[-1]))
