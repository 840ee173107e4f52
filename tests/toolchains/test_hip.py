"""The `hip` toolchain with no GPU (CI): availability, arch choice, every .hip example for gfx906 and gfx90a,
ISA dumps (llvm-objdump, dccobjdump, the -save-temps fallback), resources, and the Hygon-arch refusal.
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from pytest_dcuopt.errors import CaseError, ToolchainUnavailable
from pytest_dcuopt.isa.checks import PASS, evaluate
from pytest_dcuopt.isa.instruction_lines import parse_amdgcn
from pytest_dcuopt.isa.spec import IsaSpec
from pytest_dcuopt.toolchains import Capability
from pytest_dcuopt.toolchains.cache import BuildCache
from pytest_dcuopt.toolchains.hip import (
    COMPILE_ARCH_ENV,
    HIPCC_ENV,
    HipToolchain,
    UnsupportedArch,
    ck_tile_flags,
    gfx_entries,
    is_hygon,
)
from pytest_dcuopt.toolchains.hip_install import DCCOBJDUMP_ENV, LLVM_OBJDUMP_ENV
from tests.conftest import DATA, KERNELS
from tests.context import skip_if_no_hipcc, skip_if_no_llvm_objdump

EXAMPLES = sorted(p for p in KERNELS.rglob("kernel.hip"))
ARCHS = ("gfx906", "gfx90a")  # the nearest upstream relatives of the DCU ISA


def test_arch_entries_and_hygon_names() -> None:
    assert gfx_entries("gfx90a,sm_90") == ["gfx90a"]
    assert gfx_entries("gfx936:sramecc+:xnack-") == ["gfx936:sramecc+:xnack-"]
    assert gfx_entries("sm_90") == [] and gfx_entries(None) == []
    assert is_hygon("gfx936:sramecc+:xnack-") and is_hygon("gfx928") and not is_hygon("gfx90a")
    assert HipToolchain("gfx938").isa_family_for("gfx938") == "dcu"
    assert HipToolchain().isa_family_for("gfx906") == "amdgcn"


def test_one_arch_per_run() -> None:
    with pytest.raises(ToolchainUnavailable, match=r"names 2 AMD archs .*run pytest once per arch"):
        HipToolchain("gfx906,gfx90a").target_arch({"device": None})
    if HipToolchain().compiler():
        assert "names 2 AMD archs" in HipToolchain("gfx906,gfx90a").availability().reason


def test_no_arch_is_never_guessed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(COMPILE_ARCH_ENV, raising=False)
    arch, why = HipToolchain("sm_90").target_arch({"device": None})
    assert arch is None
    assert "--dcuopt-arch 'sm_90' names no gfx arch" in why and "pass --dcuopt-arch=gfx90a" in why


def test_ci_names_the_compile_only_arch_explicitly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(COMPILE_ARCH_ENV, "gfx90a")
    assert HipToolchain().target_arch({"device": None}) == (
        "gfx90a", "$DCUOPT_HIP_COMPILE_ARCH (no --dcuopt-arch, no ROCm/DTK device)")
    assert HipToolchain("gfx906").target_arch({"device": None})[0] == "gfx906"  # the option wins
    monkeypatch.setenv(COMPILE_ARCH_ENV, "sm_90")
    with pytest.raises(ToolchainUnavailable, match="DCUOPT_HIP_COMPILE_ARCH='sm_90' is not an AMD arch"):
        HipToolchain().target_arch({"device": None})


def test_a_missing_compiler_is_unavailable_with_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(HIPCC_ENV, "/nonexistent/hipcc")
    availability = HipToolchain("gfx90a").availability()
    assert availability.capability is Capability.UNAVAILABLE
    assert "apt-get install hipcc libamdhip64-dev" in availability.reason


def test_ck_tile_discovery_names_what_it_tried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "kernel.hip"
    source.write_text('#include "ck_tile/core.hpp"\nextern "C" void solve(float* x, int N) {}\n')
    for variable in ("CK_TILE_PATH", "CK_TILE_INCLUDE_DIR", "CK_PATH", "COMPOSABLE_KERNEL_PATH"):
        monkeypatch.delenv(variable, raising=False)
    if any((Path(p) / "ck_tile").is_dir() for p in ("/opt/dtk/include", "/opt/rocm/include", "/usr/include")):
        pytest.skip("this machine has a CK Tile install")
    with pytest.raises(CaseError, match=r"uses CK Tile .* Tried: \$CK_TILE_PATH \(unset\); .*Set CK_TILE_PATH"):
        ck_tile_flags(source)
    (tmp_path / "ck" / "include" / "ck_tile").mkdir(parents=True)
    monkeypatch.setenv("CK_TILE_PATH", str(tmp_path / "ck"))
    assert ck_tile_flags(source) == ("-I", str(tmp_path / "ck" / "include"))


# ----- with a real HIP compiler -----------------------------------------------------------------
@pytest.fixture(scope="module")
def cache(shared_build_cache: Path) -> BuildCache:
    """The session's build cache (tests/conftest.py), shared with the pytester runs of the same sources."""
    return BuildCache(shared_build_cache)


@pytest.fixture(scope="module")
def built(cache: BuildCache) -> dict[tuple[str, str], object]:
    """Every .hip example built for gfx906 and gfx90a (two at a time: CI has two cores)."""
    toolchains = {arch: HipToolchain(arch) for arch in ARCHS}
    jobs = [(arch, source) for arch in ARCHS for source in EXAMPLES]
    with ThreadPoolExecutor(2) as pool:
        artifacts = list(pool.map(lambda job: toolchains[job[0]].build(job[1], cache), jobs))
    return {(arch, str(source.relative_to(KERNELS))): (toolchains[arch], artifact)
            for (arch, source), artifact in zip(jobs, artifacts, strict=True)}


@skip_if_no_hipcc
def test_compile_only_without_a_rocm_device() -> None:
    availability = HipToolchain("gfx90a").availability()
    if availability.capability is Capability.RUN:
        pytest.skip(f"this machine has a ROCm/DTK device: {availability.reason}")
    assert availability.capability is Capability.COMPILE_ONLY
    assert "Builds and ISA checks still run for gfx90a (--dcuopt-arch)" in availability.reason
    assert availability.details["isa_family"] == "amdgcn"


@skip_if_no_hipcc
@skip_if_no_llvm_objdump
@pytest.mark.parametrize("arch", ARCHS)
def test_every_hip_example_builds_and_disassembles_per_kernel(built: dict, arch: str) -> None:
    assert EXAMPLES, "no .hip examples under kernels/"
    for (build_arch, name), (toolchain, artifact) in built.items():
        if build_arch != arch:
            continue
        assert "HIP_PLATFORM=amd" in artifact.command and f"--offload-arch={arch}" in artifact.command
        dump = toolchain.isa_dump(artifact)
        assert not dump.errors and not dump.notes, (name, dump.errors, dump.notes)
        assert dump.family == "amdgcn" and dump.arch == arch
        assert dump.functions and all(parse_amdgcn(text) for text in dump.functions.values()), name
        kernels = [s for s in dump.resources if s in dump.functions]
        assert kernels, f"{name}: no per-kernel resources"
        for symbol in kernels:
            usage = dump.resources[symbol]
            assert usage.registers and usage.sgprs and usage.spills == 0 and usage.occupancy, (name, usage)


@skip_if_no_hipcc
@skip_if_no_llvm_objdump
def test_the_float4_example_issues_16_byte_loads_on_both_archs(built: dict) -> None:
    spec = IsaSpec.from_kwargs({"require": {r"\bglobal_load_dwordx4\b": 2}, "function": "vector_add_float4_hip"})
    for arch in ARCHS:
        toolchain, artifact = built[(arch, "vector_add/branches/hip_float4/kernel.hip")]
        dump = toolchain.isa_dump(artifact)
        dump.demangled = {s: s.split("P", 1)[0][4:] for s in dump.functions}  # cheap: _Z21vector_add_float4_hip...
        verdict = evaluate(spec, dump, f"hip_float4@{arch}")
        assert verdict.outcome == PASS, verdict.message()


@skip_if_no_hipcc
def test_an_upstream_compiler_refuses_a_hygon_arch_with_a_clear_reason(tmp_path: Path) -> None:
    toolchain = HipToolchain("gfx936")
    if "dcc version" in toolchain.identity() or "DTK" in toolchain.identity():
        pytest.skip("this hipcc is DTK's: gfx936 builds here")
    with pytest.raises(UnsupportedArch, match=r"does not support gfx936: .*invalid target ID 'gfx936'.*DTK's hipcc"):
        toolchain.build(EXAMPLES[0], BuildCache(tmp_path))


@skip_if_no_hipcc
def test_without_llvm_objdump_the_save_temps_assembly_is_used_and_said(cache: BuildCache,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LLVM_OBJDUMP_ENV, "/bin/false")
    monkeypatch.delenv(DCCOBJDUMP_ENV, raising=False)
    toolchain = HipToolchain("gfx90a")
    artifact = toolchain.build(DATA / "cases" / "isa_spill" / "kernel.hip", cache)
    dump = toolchain.isa_dump(artifact)
    assert any(n.startswith("FALLBACK: llvm-objdump failed (exit 1)") and "-save-temps" in n for n in dump.notes)
    assert not dump.errors and "fallback: HIP_PLATFORM=amd" in dump.tool and "-save-temps" in dump.tool
    assert "_Z12spill_kernelPKfPfi" in dump.functions
    assert dump.resources["_Z12spill_kernelPKfPfi"].spills and dump.resources["_Z12spill_kernelPKfPfi"].spills > 0
    verdict = evaluate(IsaSpec.from_kwargs({"forbid": ["@scratch_traffic"]}), dump, "isa_spill/hip/baseline")
    assert verdict.outcome == "fail" and "note: FALLBACK" in verdict.message()


@skip_if_no_hipcc
def test_dccobjdump_is_preferred_and_its_side_files_are_read(tmp_path: Path, cache: BuildCache,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A stand-in dccobjdump that behaves like DTK's (an .ISA file in the working directory) with recorded text."""
    recorded = DATA / "isa" / "dcu" / "recorded_gfx936.s"
    fake = tmp_path / "dccobjdump"
    fake.write_text(f"#!/bin/sh\necho \"$@\" > args.txt\ncp {recorded} ./kernel.co.ISA\n")
    fake.chmod(0o755)
    monkeypatch.setenv(DCCOBJDUMP_ENV, str(fake))
    toolchain = HipToolchain("gfx90a")
    artifact = toolchain.build(EXAMPLES[0], cache)
    dump = toolchain.isa_dump(artifact)
    assert dump.tool.startswith(f"{fake} --inputs=")
    assert "--show-sass --show-instruction-encoding --separate-functions" in dump.tool
    assert "_Z17gemm_f16_pipelinev" in dump.functions and not dump.errors


@skip_if_no_hipcc
def test_a_dccobjdump_that_prints_nothing_falls_back_to_save_temps(cache: BuildCache,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DCCOBJDUMP_ENV, "/bin/true")
    toolchain = HipToolchain("gfx90a")
    artifact = toolchain.build(EXAMPLES[0], cache)
    dump = toolchain.isa_dump(artifact)
    assert dump.notes and dump.notes[0].startswith("FALLBACK: dccobjdump printed no instructions")
    assert dump.functions and not dump.errors
    assert os.path.basename(dump.tool.split(";")[0].split()[0]) == "true"
