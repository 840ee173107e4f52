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


# Benchmark sizes (docs/usage.md#benchmark-sizes): every branch is timed at each, with its own speedup and champion,
# so bandwidth can be read against size; correctness is still checked at dims.json and the drawn dims above. A size is
# named by where its working set fits. Samples are cold (caches flushed before each: docs/usage.md#timing), so the
# small sizes show the per-call overhead and latency end of the curve; --dcuopt-hot shows cache bandwidth instead.
# CPU (the development box: 1 MiB L2 per core, 32 MiB L3): 768 KiB moved fits the L2; 96 MiB (dims.json's N) streams
# from DRAM. Two sizes keep the example suite's run short on 2 cores.
bench_sizes = {"l2": {"N": 1 << 16}, "dram": {"N": 1 << 23}}
# GPUs (an H200's L2 is 50 MB): 12 MB moved fits the L2, 48 MB is at its edge, 384 MB (dims.cuda.json's N) streams
# from HBM.
GPU_SIZES = {"l2": {"N": 1 << 20}, "l2_edge": {"N": 1 << 22}, "hbm": {"N": 1 << 25}}
# Triton: timed at dims.triton.json only; without a GPU its interpreter runs in numpy, far too slow for these sizes.
bench_sizes_by_toolchain = {"cuda": GPU_SIZES, "hip": GPU_SIZES, "triton": None}


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
