"""Fixture for the `triton` toolchain: c = a + b, run under Triton's interpreter with no GPU.

Branches: the baseline (1024-element blocks, 4 floats per lane: 16-byte buffer loads on AMD), `scalar`
(256-element blocks, one float per lane: 4-byte loads; correct, but fails the dwordx4 ISA mark) and
`overrun` (stores 3 elements past the end of c: must fail alone with "wrote past the end of buffer 'c'").
"""
import pytest

shapes = {"a": ("N",), "b": ("N",), "c": ("N",)}
outputs = ["c"]
inputs = {"a": ("normal", 0.0, 1.0), "b": ("normal", 0.0, 1.0)}
dim_ranges = {"N": (1, 3000)}


def reference(a, b, c, N):
    c.copy_(a + b)


def bytes_moved(N):
    return 12 * N


_WIDE_LOADS = pytest.mark.isa(family="amdgcn", require={r"\bbuffer_load_dwordx4\b": 2, r"\bbuffer_store_dwordx4\b": 1},
                              reason="4 floats per lane: 16-byte buffer loads and stores")
branch_marks = {"baseline": [_WIDE_LOADS], "scalar": [_WIDE_LOADS]}
