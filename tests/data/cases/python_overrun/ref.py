"""Fixture for the `python` toolchain: y = 3 * x, but the kernel also writes one element past the end of y
(through y's underlying storage). The harness must catch it like the C ABI toolchains do ("wrote past the end").
"""

dim_ranges = {"N": (1, 200)}


def reference(x, y, N):
    y.copy_(3.0 * x)
