"""The `cuda` toolchain: builds, SASS and resources with no GPU (CI), and the real runs where a GPU exists.

Compile-only checks build every example `.cu`/`.hip` for sm_90 with nvcc and look at the machine
code the optimisation is about (16-byte loads, shuffles, shared memory, no spills). GPU tests skip
with the reason when torch sees no CUDA device; on the H200 they run (docs/gpu-timing.md).
"""
from __future__ import annotations

import json
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from pytest_dcuopt.errors import CompileError
from pytest_dcuopt.toolchains import Capability, make_toolchain
from pytest_dcuopt.toolchains.cache import BuildCache
from pytest_dcuopt.toolchains.cuda import DEFAULT_ARCH, CudaToolchain, normalize_arch
from pytest_dcuopt.toolchains.hip_nvidia import compat_include_dir, repair_text
from tests.conftest import DATA, KERNELS
from tests.context import (
    cuda_device_missing,
    skip_if_cuda_device,
    skip_if_no_cuda_device,
    skip_if_no_cuobjdump,
    skip_if_no_hip_headers,
    skip_if_no_nvcc,
)

EXAMPLES = sorted(p for p in KERNELS.rglob("kernel.*") if p.suffix in (".cu", ".hip"))

# What each example's optimisation must leave in its SASS (function base name -> required / forbidden text).
EXPECTED: dict[str, dict[str, tuple[tuple[str, ...], tuple[str, ...]]]] = {
    "vector_add/kernel.cu": {"vector_add_scalar": (("LDG.E", "STG.E"), (".128",))},
    "vector_add/branches/grid_stride/kernel.cu": {"vector_add_grid_stride": (("LDG.E",), (".128",))},
    "vector_add/branches/float4/kernel.cu": {"vector_add_float4": (("LDG.E.128", "STG.E.128"), ())},
    "vector_add/branches/float4_grid_stride/kernel.cu": {
        "vector_add_float4_grid_stride": (("LDG.E.128", "STG.E.128"), ())},
    "vector_add/branches/hip_float4/kernel.hip": {"vector_add_float4_hip": (("LDG.E.128", "STG.E.128"), ())},
    "row_softmax/kernel.cu": {"softmax_thread_per_row": (("LDG.E",), ("SHFL",))},
    "row_softmax/branches/warp_per_row/kernel.cu": {"softmax_warp_per_row": (("SHFL.BFLY", "MUFU.EX2"), ())},
    "row_softmax/branches/block_smem_row/kernel.cu": {"softmax_block_smem_row": (("LDG.E.128", "STS.128", "SHFL.BFLY",
                                                                                  "BAR.SYNC"), ())},
    "row_sum/kernel.cu": {"row_sum_thread_per_row": (("LDG.E",), ("SHFL",))},
    "row_sum/branches/warp_per_row/kernel.cu": {"row_sum_warp_per_row": (("SHFL.BFLY",), ())},
    "row_sum/branches/block_per_row_float4/kernel.cu": {"row_sum_block_float4": (("LDG.E.128", "SHFL.BFLY",
                                                                                   "BAR.SYNC"), ())},
    "matmul/kernel.cu": {"matmul_naive": (("FFMA",), ("LDS", "BAR.SYNC"))},
    "matmul/branches/smem_tiled/kernel.cu": {"matmul_smem_tiled": (("LDS", "STS", "BAR.SYNC", "FFMA"), ())},
    "matmul/branches/regtile_4x4/kernel.cu": {"matmul_regtile": (("LDS.128", "BAR.SYNC", "FFMA"), ())},
}
SHARED_BYTES = {"matmul_smem_tiled": 16 * 16 * 4 + 16 * 17 * 4, "matmul_regtile": 2 * 16 * 64 * 4}


def relative(path: Path) -> str:
    return str(path.relative_to(KERNELS))


def base(function: str) -> str:
    from pytest_dcuopt.isa.symbols import base_name

    return base_name(function)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """Every example built once for sm_90 (two at a time: CI has two cores)."""
    if CudaToolchain().nvcc() is None:
        pytest.skip("nvcc not found (PATH or $DCUOPT_NVCC): install the CUDA toolkit")
    toolchain = CudaToolchain(arch=DEFAULT_ARCH)
    cache = BuildCache(tmp_path_factory.mktemp("cuda-cache"))
    wanted = [p for p in EXAMPLES if p.suffix == ".cu" or not _hip_missing()]
    if any(p.suffix == ".hip" for p in wanted):  # prepare the shared header copy once, before the pool
        compat_include_dir(toolchain.nvcc() or "nvcc", toolchain.identity(), cache, DEFAULT_ARCH)
    with ThreadPoolExecutor(max_workers=2) as pool:
        artifacts = dict(zip(wanted, pool.map(lambda p: _build_or_error(toolchain, p, cache), wanted), strict=True))
    return {"toolchain": toolchain, "cache": cache, "artifacts": artifacts}


def _build_or_error(toolchain: CudaToolchain, source: Path, cache: BuildCache) -> object:
    try:
        return toolchain.build(source, cache)
    except CompileError as exc:
        return exc


def _hip_missing() -> str | None:
    from tests.context import hip_headers_missing

    return hip_headers_missing()


def test_every_cuda_example_has_expectations() -> None:
    assert EXAMPLES, "no .cu/.hip examples found under kernels/"
    assert {relative(p) for p in EXAMPLES if p.suffix == ".cu"} <= set(EXPECTED)
    assert set(EXPECTED) <= {relative(p) for p in EXAMPLES}


@skip_if_no_nvcc
@skip_if_no_cuobjdump
@pytest.mark.parametrize("source", EXAMPLES, ids=relative)
def test_example_builds_for_sm90_with_the_expected_sass_and_resources(built: dict, source: Path) -> None:
    if source.suffix == ".hip" and _hip_missing():
        pytest.skip(_hip_missing())
    artifact = built["artifacts"][source]
    assert not isinstance(artifact, Exception), str(artifact)
    assert artifact.arch == "sm_90" and "-arch=sm_90" in artifact.command and artifact.path.is_file()
    toolchain: CudaToolchain = built["toolchain"]
    sass = toolchain.disassemble(artifact)
    resources = toolchain.resource_usage(artifact)
    by_base = {base(name): text for name, text in sass.items()}
    assert set(sass) == set(resources), "SASS and resource reports name different functions"
    assert sass, f"no kernel functions found in {artifact.path}"
    for function, (required, forbidden) in EXPECTED.get(relative(source), {}).items():  # other .hip: generic
        assert function in by_base, f"{function} not among {sorted(by_base)}"
        text = by_base[function]
        for needle in required:
            assert needle in text, f"{relative(source)}: {function} lacks {needle}"
        for needle in forbidden:
            assert needle not in text, f"{relative(source)}: {function} has {needle}"
    for name, usage in resources.items():
        assert usage.spills == 0, f"{name} spills: {usage}"
        assert usage.registers is not None and 8 <= usage.registers <= 128
        assert not name.startswith("_Z") or shutil.which("c++filt") is None  # demangled where c++filt exists
        if base(name) in SHARED_BYTES:
            assert usage.shared_bytes == SHARED_BYTES[base(name)]
    if source.suffix == ".hip":
        assert "-D__HIP_PLATFORM_NVIDIA__" in artifact.command and "-x cu" in artifact.command
        assert "HIP" in artifact.log and "NVIDIA-platform headers" in artifact.log


@skip_if_no_nvcc
def test_rebuild_is_a_cache_hit_with_the_same_command(built: dict) -> None:
    source = KERNELS / "vector_add" / "kernel.cu"
    first = built["artifacts"][source]
    again = built["toolchain"].build(source, built["cache"])
    assert again.cached and again.path == first.path and again.command == first.command


@skip_if_no_nvcc
@skip_if_no_cuobjdump
def test_arch_override_changes_the_machine_code(tmp_path: Path) -> None:
    toolchain = CudaToolchain(arch="sm_80")
    assert toolchain.target_arch() == ("sm_80", "--dcuopt-arch")
    artifact = toolchain.build(KERNELS / "vector_add" / "kernel.cu", BuildCache(tmp_path))
    assert artifact.arch == "sm_80" and "-arch=sm_80" in artifact.command
    (text,) = toolchain.disassemble(artifact).values()
    assert "LDG.E" in text and "desc[" not in text  # sm_80 SASS has no memory descriptors; sm_90's does


def test_arch_names() -> None:
    assert [normalize_arch(a) for a in ("sm_90", "sm90", "90", "compute_90", "SM_90A", "gfx936")] == \
        ["sm_90", "sm_90", "sm_90", "sm_90", "sm_90a", None]
    arch, note = CudaToolchain(arch="gfx936").target_arch({"device": None})
    assert arch == DEFAULT_ARCH and "--dcuopt-arch gfx936 is not an NVIDIA architecture" in note
    arch, note = CudaToolchain().target_arch({"device": "NVIDIA H200", "capability": [9, 0]})
    assert arch == "sm_90" and "compute capability 9.0" in note
    assert "documented default sm_90" in CudaToolchain().target_arch({"device": None})[1]


@skip_if_no_nvcc
def test_compile_errors_name_the_command_and_the_error(tmp_path: Path) -> None:
    source = tmp_path / "kernel.cu"
    source.write_text('extern "C" void solve(float* x, int N) { undefined_thing(x); }\n')
    with pytest.raises(CompileError) as caught:
        CudaToolchain(arch="sm_90").build(source, BuildCache(tmp_path / "cache"))
    message = str(caught.value)
    assert "nvcc" in message and "-arch=sm_90" in message and "undefined_thing" in message


@skip_if_no_nvcc
def test_availability_without_a_device_is_compile_only_and_says_why() -> None:
    availability = make_toolchain("cuda").availability()
    if cuda_device_missing() is None:
        assert availability.capability is Capability.RUN and "sm_" in availability.reason
        return
    assert availability.capability is Capability.COMPILE_ONLY
    assert "no CUDA device to run on" in availability.reason
    assert "documented default sm_90" in availability.reason
    assert availability.details["arch"] == "sm_90"


def test_unavailable_without_nvcc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DCUOPT_NVCC", "/nonexistent/nvcc")
    availability = CudaToolchain().availability()
    assert availability.capability is Capability.UNAVAILABLE and "nvcc not found" in availability.reason


# ----- HIP's NVIDIA headers ----------------------------------------------------------------
HEADER = """inline static hipError_t hipGetDeviceProperties(hipDeviceProp_t* p, int d) {
    cudaDeviceProp c;
    p->totalGlobalMem = c.totalGlobalMem;
    p->clockRate = c.clockRate;
    return hipSuccess;
}
inline static hipError_t hipMemAdvise(const void* ptr, size_t n, int advice, int device) {
    return hipCUDAErrorTohipError(cudaMemAdvise(ptr, n,
        (cudaMemoryAdvise)advice, device));
}
template <class T, int dim, enum cudaTextureReadMode readMode>
inline static hipError_t hipBindTexture(size_t* offset, const struct texture<T, dim, readMode>& tex,
                                        const void* devPtr, size_t size = UINT_MAX) {
    return hipCUDAErrorTohipError(cudaBindTexture(offset, tex, devPtr, size));
}
inline static hipError_t hipFree(void* p) { return hipCUDAErrorTohipError(cudaFree(p)); }
"""


def test_repair_text_applies_the_three_repairs() -> None:
    errors = [(4, 'class "cudaDeviceProp" has no member "clockRate"'),
              (9, 'no suitable constructor exists to convert from "int" to "cudaMemLocation"'),
              (13, "texture is not a template"), (15, 'identifier "cudaBindTexture" is undefined')]
    text, changes = repair_text(HEADER, errors)
    assert "p->totalGlobalMem = c.totalGlobalMem;" in text  # untouched
    assert "/* dcuopt: dropped, removed from cudaDeviceProp: p->clockRate = c.clockRate; */" in text
    assert "return hipErrorNotSupported; /* dcuopt: was: return hipCUDAErrorTohipError(cudaMemAdvise(" in text
    assert "struct texture<" not in text and "removed hipBindTexture" in text
    assert "inline static hipError_t hipFree(void* p)" in text
    assert [(c["function"], c["action"]) for c in changes] == [
        ("hipGetDeviceProperties", "dropped statement"), ("hipMemAdvise", "returns hipErrorNotSupported"),
        ("hipBindTexture", "removed wrapper")]


@skip_if_no_nvcc
@skip_if_no_hip_headers
def test_hip_headers_are_adapted_to_this_nvcc_and_say_what_changed(built: dict) -> None:
    toolchain: CudaToolchain = built["toolchain"]
    headers = compat_include_dir(toolchain.nvcc() or "nvcc", toolchain.identity(), built["cache"], DEFAULT_ARCH)
    assert (headers.include_dir / "hip" / "hip_runtime.h").is_file()
    report = json.loads((headers.include_dir.parent / "compat.json").read_text())
    assert report["changes"] == list(headers.changes)
    assert "adapted to this nvcc" in headers.describe() or "unchanged" in headers.describe()


# ----- end to end through pytest ---------------------------------------------------------------
@skip_if_no_nvcc
@skip_if_cuda_device
def test_compile_only_suite_skips_correctness_and_benchmarks_with_the_reason(run_plugin, pytester) -> None:
    result = run_plugin(KERNELS / "vector_add",  # one of its GPU benchmark sizes: one benchmark test per branch
                        args=("--dcuopt-toolchain=cuda", "-rs", "-k", "correctness or benchmark", "--dcuopt-sizes=hbm"))
    branches = len([p for p in EXAMPLES if relative(p).startswith("vector_add/")])
    result.assert_outcomes(skipped=2 * branches, deselected=result.parseoutcomes().get("deselected", 0))
    result.stdout.fnmatch_lines(["*cuda toolchain cannot run kernels here: no CUDA device to run on*sm_90*"])
    state = json.loads((pytester.path / "run" / "state.json").read_text())
    assert state["toolchains"]["cuda"]["capability"] == "compile-only"
    recorded = state["cases"]["vector_add"]["toolchains"]["cuda"]["branches"]
    assert len(recorded) == branches and all("no CUDA device" in b["skipped"] for b in recorded.values())


@skip_if_no_cuda_device
def test_gpu_suite_times_on_the_device_and_feeds_pytest_benchmark(run_plugin, pytester) -> None:
    result = run_plugin(KERNELS / "vector_add", args=("--dcuopt-toolchain=cuda", "--benchmark-json=bench.json",
                                                      "-k", "correctness or benchmark", "--dcuopt-interleave=0",
                                                      "--dcuopt-examples=5", "--dcuopt-sizes=hbm",
                                                      "--dcuopt-side-figures"))  # hot, seed-method, launch figures
    branches = len([p for p in EXAMPLES if relative(p).startswith("vector_add/")])
    result.assert_outcomes(passed=2 * branches, deselected=result.parseoutcomes().get("deselected", 0))
    state = json.loads((pytester.path / "run" / "state.json").read_text())
    branches = state["cases"]["vector_add"]["toolchains"]["cuda"]["branches"]
    bench = {b["name"]: b for b in json.loads((pytester.path / "bench.json").read_text())["benchmarks"]}
    for name, record in branches.items():
        timing, device = record["sizes"]["hbm"]["timing"], record["sizes"]["hbm"]["device"]  # ref.py's bench_sizes
        assert record["correct"] is True and timing["mode"] == "cold" and timing["timer"] == "cuda events"
        assert timing["hot"]["median_ms"] > 0 and timing["seed_method"]["mean_ms"] > 0
        assert timing["flush"]["bytes"] >= 2 * device["l2_bytes"]
        assert timing["launch_overhead"]["host_call_us_median"] > 0
        assert timing["event_offset"]["applied"] and 0 < timing["event_offset"]["offset_us"] < 10
        stats = bench[f"test_benchmark_cuda[{name}-hbm]"]["stats"]
        assert stats["median"] * 1e3 == pytest.approx(timing["median_ms"], rel=1e-3)  # device time, not host time


@skip_if_no_cuda_device
def test_cuda_faults_are_named_and_fail_only_their_branch(run_plugin) -> None:
    result = run_plugin(DATA / "cuda" / "cuda_faults", args=("--dcuopt-toolchain=cuda", "-k", "correctness"))
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(["*cudaErrorIllegalAddress (700)*worker process exits*"])
    # CUDA 13 reports a block of 2048 threads as cudaErrorInvalidValue; older runtimes as InvalidConfiguration.
    result.stdout.re_match_lines([r".*bad_block: CudaError: cudaErrorInvalid(Value \(1\)|Configuration \(9\)).*"
                                  r"right after calling solve\(\).*launch configuration.*"])


@skip_if_no_nvcc
def test_blocking_calls_in_a_cu_solve_go_through_the_sync_hooks(tmp_path: Path) -> None:
    """timing.sync's marked method needs the call's waits to reach cuda_shim.cu's hooks (cuda_sync_hooks.h is
    force-included into `.cu` builds): the built solve() calls the hooks, never the runtime's waits directly, and
    the library exports the functions the worker arms and reads them with."""
    source = tmp_path / "kernel.cu"
    source.write_text(
        "#include <cuda_runtime.h>\n"
        "__global__ void twice(const float* x, float* t, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) t[i] = 2.0f * x[i]; }\n"
        'extern "C" void solve(const float* x, float* y, int N) {\n'
        "  float* t = nullptr; cudaMalloc(&t, sizeof(float) * N);\n"
        "  twice<<<(N + 255) / 256, 256>>>(x, t, N);\n"
        "  cudaDeviceSynchronize();\n"
        "  cudaMemcpy(y, t, sizeof(float) * N, cudaMemcpyDeviceToDevice);\n"
        "  float first = 0.0f; cudaMemcpy(&first, y, sizeof(float), cudaMemcpyDeviceToHost);\n"
        "  cudaStreamSynchronize(0);\n"
        "  cudaFree(t);\n"
        "}\n")
    artifact = CudaToolchain().build(source, BuildCache(tmp_path / "cache"))
    objdump = shutil.which("objdump")
    if objdump is None:
        pytest.skip("objdump (binutils) not found: cannot read solve()'s calls")
    import subprocess

    listing = subprocess.run([objdump, "-d", "--no-show-raw-insn", str(artifact.path)], capture_output=True,
                             text=True, check=True).stdout
    solve = listing.split("<solve>:", 1)[1].split("\n\n", 1)[0]
    called = {line.rsplit("<", 1)[-1].split("@")[0].rstrip(">") for line in solve.splitlines()
              if "\tcall" in line or ("\tjmp" in line and "@plt" in line)}
    assert {"dcuopt_hook_device_synchronize", "dcuopt_hook_memcpy", "dcuopt_hook_stream_synchronize",
            "dcuopt_hook_free"} <= called
    assert not {"cudaDeviceSynchronize", "cudaMemcpy", "cudaStreamSynchronize", "cudaFree"} & called
    exported = subprocess.run(["nm", "-D", "--defined-only", str(artifact.path)], capture_output=True, text=True,
                              check=True).stdout
    for name in ("dcuopt_sync_begin", "dcuopt_sync_end", "dcuopt_sync_read"):
        assert name in exported


@skip_if_no_cuda_device
def test_large_host_arrays_are_page_locked_and_copy_both_ways(monkeypatch: pytest.MonkeyPatch) -> None:
    import gc

    import numpy as np
    import torch

    from pytest_dcuopt.toolchains.torch_runtime import PIN_ENV, PIN_MIN_BYTES, TorchDeviceRuntime

    runtime = TorchDeviceRuntime(0)
    assert runtime.describe()["host_memory"].startswith("page-locked"), runtime.host_memory
    large = runtime.host_empty(PIN_MIN_BYTES // 4, np.dtype(np.float32))
    small = runtime.host_empty(1024, np.dtype(np.float32))
    assert torch.from_numpy(large).is_pinned() and not torch.from_numpy(small).is_pinned()
    large[:] = np.arange(large.size, dtype=np.float32)
    buffer = runtime.upload(large)
    back = runtime.download_into(buffer, runtime.host_empty(large.size, np.dtype(np.float32)))
    np.testing.assert_array_equal(back, large)
    del large, back
    gc.collect()  # unregistered before numpy frees the memory: nothing to see but no fault
    monkeypatch.setenv(PIN_ENV, "0")
    pageable = TorchDeviceRuntime(0)
    assert pageable.host_memory.startswith("pageable")
    assert not torch.from_numpy(pageable.host_empty(PIN_MIN_BYTES // 4, np.dtype(np.float32))).is_pinned()
