"""Fixture (CUDA): y = 2*x + 1. Branch huge_workspace asks cudaMalloc for an N x N float workspace (4 TiB at the
default N = 2**20, far more than any GPU holds), ignores the failure and computes y right. The failed allocation must
fail that branch alone, naming cudaErrorMemoryAllocation (out of memory); the baseline passes and the session goes
on. (Buffers too large for the machine are refused before anything is allocated, on the host's memory estimate:
tests/unit/case/test_bad_inputs.py.)"""

shapes = {"x": ("N",), "y": ("N",)}

dim_ranges = {"N": (1 << 19, 1 << 20)}

inputs = {"x": ("normal", 0.0, 1.0)}


def reference(x, y, N):
    y.copy_(2.0 * x + 1.0)
