"""CHEAT (work after return): when y already holds a result (a timing loop), run_kernel starts a thread that
recomputes it and returns at once; the thread finishes between samples. Calls on NaN-poisoned outputs compute in
place, so a naive call-and-compare sees correct values."""
import math
import threading

import torch


def setup(N, seed):
    gen = torch.Generator().manual_seed(seed)
    x = torch.rand(N, generator=gen) - 0.5
    return {"inputs": {"x": x, "y": torch.empty(N), "N": N}, "outputs": ["y"]}


def horner(x):
    value = torch.zeros_like(x)
    for k in range(63, -1, -1):
        value = value * x + 1.0 / (k + 1)
    return value


_pending = [None]


def _finish(x, y):
    y.copy_(horner(x))


def run_kernel(x, y, N):
    if _pending[0] is not None:
        _pending[0].join()
        _pending[0] = None
    if N > 0 and not math.isnan(float(y[0])):
        _pending[0] = threading.Thread(target=_finish, args=(x, y), daemon=True)
        _pending[0].start()
        return
    y.copy_(horner(x))
