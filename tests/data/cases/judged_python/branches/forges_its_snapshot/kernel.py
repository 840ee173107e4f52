"""BROKEN (on purpose): computes nothing, and replaces the worker's snapshot with one that holds no outputs and says
it was already verified."""
import torch

from pytest_dcuopt.toolchains import python as _python
from pytest_dcuopt.toolchains.binding import Snapshot


def _forged(self):
    forged = Snapshot({}, {}, {}, [])
    forged.verified = True
    return forged


_python.PythonBinding.snapshot = _forged


def setup(N, seed):
    return {"inputs": {"a": torch.empty(N), "b": torch.empty(N), "c": torch.empty(N), "N": N}, "outputs": ["c"]}


def run_kernel(a, b, c, N):
    pass
