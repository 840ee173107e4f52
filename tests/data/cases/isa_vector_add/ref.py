"""ISA fixture: `isa` marks judged on AMDGCN (hipcc) and x86 (g++); isa_vector_add_sass is the NVIDIA half.

The baseline is scalar on every ISA and FAILS the 16-byte / packed requirements (with messages a
person can act on); `float4` (HIP) and `simd` (C++) pass them. Tests run this case with `-k test_isa`.
The sass mark also applies when the cuda toolchain builds the .hip files (portable HIP).
"""
import pytest

shapes = {"a": ("N",), "b": ("N",), "c": ("N",)}

pytestmark = [
    pytest.mark.isa(family="amdgcn", require={r"\bglobal_load_dwordx4\b": 2},
                    methods=["memory.vectorized_global_access"],
                    reason="a and b must be read with 16-byte (float4) global loads"),
    pytest.mark.isa(family="sass", require={r"\bLDG\.E\.128\b": 2}, reason="a and b must be read with 16-byte LDG"),
    pytest.mark.isa(family="x86", require=[r"\bv?addps\b"], reason="the adds must be packed SIMD (addps/vaddps)"),
]


def reference(a, b, c, N):
    c.copy_(a + b)
