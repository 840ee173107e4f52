"""Fixture for the regression gate (tests/plugin/test_gate.py): y = 2*x + 1. The same sources run slower, faster or
wrong from one run to the next through environment variables the kernels read once per process:
DCUOPT_GATE_SLOW_WORK=k adds k*N dependent steps to `slows_down`, DCUOPT_GATE_FAST_WORK=k to `speeds_up`, and
DCUOPT_GATE_BREAK=1 makes `breaks` write y[0] wrong. Unset, every branch is correct and equally fast.
"""

shapes = {"x": ("N",), "y": ("N",)}

dim_ranges = {"N": (1, 2048)}

inputs = {"x": ("normal", 0.0, 1.0)}


def reference(x, y, N):
    y.copy_(2.0 * x + 1.0)


def bytes_moved(N):
    return 2 * 4 * N
