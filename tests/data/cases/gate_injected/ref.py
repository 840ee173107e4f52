"""Fixture for the gate's detection rates (tools/device/gate_check.sh): y = 2*x + 1 after a fixed chain of dependent
steps that sets the kernel's time. $DCUOPT_GATE_SLOW_PERCENT=p (read once per process; unset: 0) makes the chain p%
longer, so one source measures as A in one process and as A slowed down by p% in another. Only the baseline kernel:
`kernel.cpp` (about 0.3-1 ms on a CPU core) and `kernel.cu` (about 50-70 us on an H200 at N = 262144).
"""

shapes = {"x": ("N",), "y": ("N",)}

dim_ranges = {"N": (1, 2048)}

inputs = {"x": ("normal", 0.0, 1.0)}


def reference(x, y, N):
    y.copy_(2.0 * x + 1.0)


def bytes_moved(N):
    return 2 * 4 * N
