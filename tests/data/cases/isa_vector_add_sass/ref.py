"""ISA fixture, NVIDIA half: the scalar baseline FAILS a 16-byte LDG requirement, `float4` passes it.

Plain .cu sources (nvcc alone, fast); the AMDGCN and x86 halves are in isa_vector_add.
"""
import pytest

shapes = {"a": ("N",), "b": ("N",), "c": ("N",)}

pytestmark = [pytest.mark.isa(family="sass", require={r"\bLDG\.E\.128\b": 2},
                              methods=["memory.vectorized_global_access"],
                              reason="a and b must be read with 16-byte LDG")]


def reference(a, b, c, N):
    c.copy_(a + b)
