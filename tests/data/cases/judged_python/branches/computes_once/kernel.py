"""BROKEN (on purpose): computes once per output tensor and hands that result back on every later call."""
import torch

_kept = {}


def setup(N, seed):
    return {"inputs": {"a": torch.empty(N), "b": torch.empty(N), "c": torch.empty(N), "N": N}, "outputs": ["c"]}


def run_kernel(a, b, c, N):
    key = (c.data_ptr(), N)
    if key in _kept:
        c.copy_(_kept[key])
        return
    torch.add(a, b, out=c)
    _kept[key] = c.clone()
