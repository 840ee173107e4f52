"""Fixture for Triton variants and hints: y = 2 * x on an M x N matrix, one program per row.

The launcher passes the row stride to a kernel that does not specialise on it (`do_not_specialize`), so the
compiler cannot tell that a row starts on a 16-byte boundary: the bare branch loads one float per lane
(`buffer_load_dword` on gfx90a). Its variant `@hinted` turns on `tl.multiple_of(start, 4)`, which lets it load
4 floats per lane (`buffer_load_dwordx4`); `@hinted_no_buffer_ops` is `@hinted` compiled with
AMDGCN_USE_BUFFER_OPS=0: the same 16-byte loads as global loads (`global_load_dwordx4`). `@rejected` asks for a
float8e4b15 conversion that gfx90a does not provide, so the compile probe rejects it there (unavailable, never
failed). The bare branch and `@hinted` carry the same mark: the bare branch fails it, `@hinted` passes it.
"""
import pytest

shapes = {"x": ("M", "N"), "y": ("M", "N")}
outputs = ["y"]
inputs = {"x": ("normal", 0.0, 1.0)}
dim_ranges = {"M": (1, 5), "N": (1, 300)}


def reference(x, y, M, N):
    y.copy_(2 * x)


_WIDE_LOADS = pytest.mark.isa(family="amdgcn", require={r"\bbuffer_load_dwordx4\b": 1},
                              reason="the row start is a multiple of 4 floats: 16-byte loads")
branch_marks = {
    "baseline": [_WIDE_LOADS],
    "baseline@hinted": [_WIDE_LOADS],
    "baseline@hinted_no_buffer_ops": [pytest.mark.isa(
        family="amdgcn", require=[r"\bglobal_load_dwordx4\b"], forbid=[r"\bbuffer_load"],
        reason="AMDGCN_USE_BUFFER_OPS=0: the 16-byte loads are global loads")],
}
