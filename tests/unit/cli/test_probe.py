"""`dcuopt probe`: compile-probes of builtin call shapes with the HIP compiler installed here (device code only)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_dcuopt.cli import main as cli
from pytest_dcuopt.cli.probe import (
    AVAILABLE,
    INCONCLUSIVE,
    UNAVAILABLE,
    Probe,
    arch_rejection,
    compiler_words,
    load_probes,
    probe_call,
)
from pytest_dcuopt.external_tools import ToolResult
from pytest_dcuopt.toolchains.hip import HipToolchain

HIPCC = HipToolchain("gfx90a").compiler()
needs_hipcc = pytest.mark.skipif(HIPCC is None, reason="no hipcc on this machine")
READFIRSTLANE = "i32[0] = __builtin_amdgcn_readfirstlane(i32[1])"
MADE_UP = "i32[0] = __builtin_amdgcn_made_up_lane_trick(i32[1])"
FLOAT4 = "typedef float float4_t __attribute__((ext_vector_type(4)));"
MFMA = "((float4_t*)f32)[0] = __builtin_amdgcn_mfma_f32_4x4x1f32(f32[4], f32[5], ((float4_t*)f32)[2], 0, 0, 0)"


@needs_hipcc
def test_a_real_gfx90a_builtin_is_available_and_a_made_up_one_unavailable_in_the_compilers_words(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = cli.main(["probe", str(tmp_path), "--arch", "gfx90a", "--call", READFIRSTLANE, "--call", MADE_UP])
    out = capsys.readouterr().out
    assert status == 1, out  # not every call is available
    records = {r["call"]: r for r in load_probes(tmp_path / "probes")}
    assert records[READFIRSTLANE]["status"] == AVAILABLE
    made_up = records[MADE_UP]
    assert made_up["status"] == UNAVAILABLE
    assert "use of undeclared identifier '__builtin_amdgcn_made_up_lane_trick'" in made_up["compiler_message"]
    assert "gfx90a: unavailable: " + MADE_UP in out and "undeclared identifier" in out
    for record in records.values():  # the probe and its log stay in the run
        assert MADE_UP.split(" = ")[1].split("(")[0] in (tmp_path / "probes" / made_up["source"]).read_text()
        log = (tmp_path / "probes" / record["log"]).read_text()
        assert "--offload-arch=gfx90a" in log and f"exit {record['returncode']}" in log


@needs_hipcc
def test_a_builtin_that_needs_a_feature_the_arch_lacks_is_unavailable_there_only(tmp_path: Path) -> None:
    on_cdna2 = probe_call(Probe(MFMA, "gfx90a", FLOAT4), tmp_path)
    on_vega = probe_call(Probe(MFMA, "gfx906", FLOAT4), tmp_path)
    assert on_cdna2["status"] == AVAILABLE, on_cdna2
    assert on_vega["status"] == UNAVAILABLE and "needs target feature mai-insts" in on_vega["compiler_message"]
    assert len(json.loads((tmp_path / "probes.json").read_text())["probes"]) == 2


@needs_hipcc
def test_probing_the_same_shape_again_replaces_its_record(tmp_path: Path) -> None:
    probe_call(Probe(READFIRSTLANE, "gfx90a"), tmp_path)
    probe_call(Probe(READFIRSTLANE, "gfx90a"), tmp_path)
    assert len(load_probes(tmp_path)) == 1


@needs_hipcc
def test_a_hygon_arch_with_an_upstream_hipcc_is_inconclusive_and_names_dtk(tmp_path: Path) -> None:
    record = probe_call(Probe(READFIRSTLANE, "gfx936"), tmp_path)
    if "dtk" in (HIPCC or "").lower():
        pytest.skip("this hipcc is DTK's: it knows gfx936")
    assert record["status"] == INCONCLUSIVE
    assert "does not know gfx936" in record["reason"] and "DTK's hipcc" in record["reason"]
    assert "gfx936" in record["compiler_message"]


@needs_hipcc
def test_a_frame_that_does_not_compile_is_inconclusive_not_an_unavailable_builtin(tmp_path: Path) -> None:
    record = probe_call(Probe(READFIRSTLANE, "gfx90a", prelude="this is not C++;"), tmp_path)
    assert record["status"] == INCONCLUSIVE
    assert "does not compile for gfx90a even without the call" in record["reason"]


def test_a_compiler_that_cannot_be_run_makes_the_probe_inconclusive_with_the_install_hint(tmp_path: Path) -> None:
    record = probe_call(Probe(READFIRSTLANE, "gfx90a"), tmp_path, hipcc=str(tmp_path / "no-such-hipcc"))
    assert record["status"] == INCONCLUSIVE and "could not be run" in record["reason"]
    assert "install a HIP compiler" in record["reason"]


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=3000))
def test_any_compiler_output_gives_at_most_six_error_lines(text: str) -> None:
    words = compiler_words(ToolResult(("hipcc",), 1, "", text, 0.0))
    assert len(words.splitlines()) <= 6
    assert arch_rejection(ToolResult(("hipcc",), 1, "", text, 0.0), "gfx936") in (None, *[
        line.strip() for line in text.splitlines()])
