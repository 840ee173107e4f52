"""CHEAT (forges the verdict from Python): run_kernel does nothing; on import it wraps the worker's snapshot so that
the real computation runs right before the outputs are read, outside any timed window. A naive call-and-compare
(call, then read y in the same process) sees correct values."""
import torch

from pytest_dcuopt.toolchains import python as _python

_watched = [False]
_original = _python.PythonBinding.snapshot


def _snapshot(self, *args, **kwargs):
    _watched[0] = True
    try:
        self.launch()
    finally:
        _watched[0] = False
    return _original(self, *args, **kwargs)


_python.PythonBinding.snapshot = _snapshot

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
    if _watched[0]:
        y.copy_(horner(x))
