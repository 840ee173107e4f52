"""Reference for ``c = a + b`` (elementwise, dim N)."""

import pytest

shapes = {"a": ("N",), "b": ("N",), "c": ("N",)}

# Small domain for the Hypothesis correctness tests (includes 1, primes, tails).
dim_ranges = {"N": (1, 5000)}

inputs = {
    "a": ("normal", 0.0, 1.0),
    "b": ("normal", 0.0, 1.0),
}


def reference(a, b, c, N):
    c.copy_(a + b)


def flops(N):
    return N  # one add per element


def bytes_moved(N):
    return 3 * 4 * N  # read a, b; write c (float32)


# ISA expectations, checked by test_isa_<toolchain>[<branch>] from a build alone (no GPU needed);
# see docs/isa.md. Each mark names the ISA family it is written for.
branch_marks = {
    "restrict_simd": [pytest.mark.isa(
        family="x86", require=[r"\bv?addps\b"], methods=["memory.vectorized_global_access"],
        reason="__restrict__ + omp simd: packed single-precision adds on vector-width memory operands")],
    "float4": [pytest.mark.isa(
        family="sass", require={r"\bLDG\.E\.128\b": 2, r"\bSTG\.E\.128\b": 1},
        methods=["memory.vectorized_global_access"], max_spills=0,
        reason="float4 accesses must compile to 16-byte global loads and stores")],
    "hip_float4": [
        pytest.mark.isa(
            family="amdgcn", require={r"\bglobal_load_dwordx4\b": 2, r"\bglobal_store_dwordx4\b": 1},
            forbid=["@scratch_traffic"], max_spills=0, methods=["memory.vectorized_global_access"],
            reason="float4 accesses must compile to 16-byte global loads and stores (dwordx4)"),
        pytest.mark.isa(family="sass", require={r"\bLDG\.E\.128\b": 2},
                        reason="the same HIP source on NVIDIA: 16-byte LDG"),
    ],
    "hip_scalar": [pytest.mark.isa(
        family="amdgcn", require=[r"\bglobal_load_dword\b"], forbid=[r"\bglobal_load_dwordx[234]\b"],
        reason="the scalar reference shape: 4-byte loads only (what hip_float4 improves on)")],
    # Triton branches: AOT-compiled for the target (default gfx942 with no GPU; see docs/triton.md).
    "triton_block1024": [
        pytest.mark.isa(family="amdgcn", require={r"\bbuffer_load_dwordx4\b": 2, r"\bbuffer_store_dwordx4\b": 1},
                        forbid=[r"\b(?:global|flat)_(?:load|store)"], max_spills=0,
                        reason="4 floats per lane on tensors under 2 GB: 16-byte buffer loads and stores"),
        pytest.mark.isa(family="sass", require={r"\bLDG\.E\.128\b": 2},
                        reason="the same kernel on NVIDIA: 16-byte LDG"),
    ],
    "triton_scalar": [pytest.mark.isa(
        family="amdgcn", require=[r"\bbuffer_load_dword\b"], forbid=[r"\bbuffer_load_dwordx[234]\b"],
        reason="one float per lane: 4-byte buffer loads (what triton_block1024 improves on)")],
}
