"""summarize, collect and inspect on material recorded on one NVIDIA H200 (tests/data/triton_inductor_h200/README.md):
Inductor's debug log (an excerpt), its cache folder (one kernel's files) and Triton AOT builds made here."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_dcuopt.triton_flow import artifacts, hints, summarize
from pytest_dcuopt.triton_flow.flow_files import FlowError

DATA = Path(__file__).resolve().parents[2] / "data"
H200 = DATA / "triton_inductor_h200"
GELU = "triton_poi_fused_gelu_2"
BEST_VARIANT = "VHOQE4UXZ5JSN3JIV2NPULZKLQBJYTHUPBZH34MGO4ZQ6DBER33Q"


@pytest.fixture(scope="module")
def log_summary() -> dict:
    return summarize.summarize([H200 / "inductor.log"])


def by_name(summary: dict, kernel: str) -> dict:
    return next(k for k in summary["kernels"] if k["kernel"] == kernel)


def test_the_log_prefix_is_removed() -> None:
    line = ("V1201 05:52:10.368000 807 torch/_inductor/runtime/triton_heuristics.py:1185] [0/0] [__output_code] "
            "Best config for k: x")
    assert summarize.message(line) == "Best config for k: x"
    assert summarize.message("AUTOTUNE addmm(1x2)") == "AUTOTUNE addmm(1x2)"


def test_benchmark_tables_and_the_winner(log_summary: dict) -> None:
    gelu = by_name(log_summary, GELU)
    assert [(c["config"].split(",")[0], c["ms"], c["n_regs"]) for c in gelu["configs"]] == [
        ("XBLOCK: 1024", 0.188288, 31), ("XBLOCK: 512", 0.171552, 19)]
    assert gelu["best"]["ms"] == 0.171552 and gelu["best"]["config"].startswith("XBLOCK: 512, num_warps: 8")


def test_coordinate_descent_trials_go_to_the_kernel_being_tuned(log_summary: dict) -> None:
    """COORDESC lines do not name their kernel; the surrounding lines do. The layer-norm kernel has one config
    (no benchmark table) and its own trials, which must not land on the kernel tuned before it."""
    gelu = by_name(log_summary, GELU)
    assert len(gelu["coordesc"]) == 7
    assert gelu["coordesc_best"]["ms"] == 0.140352 and "num_warps: 16" in gelu["coordesc_best"]["config"]
    norm = by_name(log_summary, "triton_per_fused_native_layer_norm_0")
    assert norm["configs"] == [] and norm["best"] is None and len(norm["coordesc"]) == 4
    assert by_name(log_summary, "triton_")["coordesc_best"]["ms"] == 0.082592


def test_template_tables(log_summary: dict) -> None:
    first, second = log_summary["templates"]
    assert (first["op"], first["shapes"]) == ("addmm", "2048x4096, 2048x1024, 1024x4096")
    assert first["dtypes"] == "torch.float16, torch.float16, torch.float16"
    assert first["choices"][0] == {"choice": "triton_mm_17", "ms": 0.0439, "share_of_best_pct": 100.0,
                                   "config": first["choices"][0]["config"]}
    assert "BLOCK_M=128" in first["choices"][0]["config"] and first["choices_total"] == 21
    assert len(second["choices"]) == 10 and second["choices"][0]["choice"] == "triton_mm_38"
    aten = next(c for c in second["choices"] if c["choice"] == "addmm")  # the library call lost: 60.9% of the best
    assert (aten["ms"], aten["share_of_best_pct"], aten["config"]) == (0.0467, 60.9, "")


def test_the_files_inductor_wrote(log_summary: dict) -> None:
    files = log_summary["files"]
    assert [Path(p).name for p in files["output_code"]] == ["ctb2qblqhfnkrnmea6vmotfzaqny37am6as23njwctkbd37xkznu.py"]
    assert [Path(p).parent.name for p in files["best_config"]] == ["ux", "oy"]  # the two the log names


def test_markdown_has_a_row_per_config(log_summary: dict) -> None:
    text = summarize.markdown(log_summary)
    assert f"## {GELU} (inductor log)" in text
    row = "| XBLOCK: 512, num_warps: 8, num_ctas: 1, num_stages: 1, maxnreg: None | 0.1716 | 19 | 0 | 0 | yes |"
    assert row in text
    assert "| triton_mm_17 | 0.0439 | 100.0 |" in text


def test_a_folder_without_records_is_refused(tmp_path: Path) -> None:
    with pytest.raises(FlowError, match="not a capture folder"):
        summarize.summarize([tmp_path])


def test_collect_finds_the_kernels_files_and_marks_the_winner(tmp_path: Path, log_summary: dict) -> None:
    manifest = artifacts.collect(H200 / "cache", GELU, tmp_path / "out", log_summary["files"]["output_code"])
    copied = manifest["copied"]
    assert [Path(p).name for p in copied["generated"]] == ["coyl3q5ygbn3ngijccnfn4qwan7dr6nvkmkxusd4ihstg7lymgtq.py",
                                                           "ctb2qblqhfnkrnmea6vmotfzaqny37am6as23njwctkbd37xkznu.py"]
    assert copied["best_config"][0]["XBLOCK"] == 512 and copied["best_config"][0]["num_warps"] == 16
    best = [v for v in copied["variants"] if v["best"]]
    assert [v["hash"] for v in best] == [BEST_VARIANT]  # the other 16-warp variant has XBLOCK 1024
    assert {Path(p).suffix for p in best[0]["files"]} == {".ttir", ".ttgir", ".ptx", ".cubin", ".json"}
    assert sorted(Path(p).name for p in copied["best"]) == sorted(Path(p).name for p in best[0]["files"])
    assert all(Path(p).parent.name == artifacts.BEST for p in copied["best"])
    assert [Path(p).name for p in copied["output_code"]] == ["ctb2qblqhfnkrnmea6vmotfzaqny37am6as23njwctkbd37xkznu.py"]
    assert manifest["missing"] == []  # the log's H200 paths were found again under the given cache
    assert json.loads((tmp_path / "out" / artifacts.MANIFEST).read_text()) == manifest


def test_collect_refuses_an_output_inside_the_cache_and_a_non_cache(tmp_path: Path) -> None:
    with pytest.raises(FlowError, match="inside the cache"):
        artifacts.collect(H200 / "cache", GELU, H200 / "cache" / "x")
    with pytest.raises(FlowError, match="not an Inductor cache"):
        artifacts.collect(tmp_path, GELU, tmp_path / "out")


def test_inspect_inductor_source_reads_triton_meta() -> None:
    source = next((H200 / "cache" / "oy").glob("*.py"))
    found = hints.inspect_file(source)
    kernel = found["kernels"][0]
    assert kernel["name"] == GELU and kernel["mutated_arg_names"] == ["in_out_ptr0"]
    assert [(a["name"], a["type"], a["divisibility"], a["pointer_range"]) for a in kernel["args"]] == [
        ("in_out_ptr0", "*fp16", 16, None), ("xnumel", "i32", 16, None), ("XBLOCK", "constexpr", None, None)]
    assert kernel["hint_status"]["missing_pointer_range"] == ["in_out_ptr0"]
    assert found["counts"]["load"] == 1 and found["counts"]["store"] == 1 and found["notes"] == []


def test_inspect_ttir_reads_what_the_compiler_specialised_on() -> None:
    h200 = hints.inspect_file(H200 / "cache" / "triton" / "0" / BEST_VARIANT / f"{GELU}.ttir")
    assert [(a["name"], a["pointer"], a["divisibility"]) for a in h200["kernels"][0]["args"]] == [
        ("in_out_ptr0", True, 16), ("xnumel", False, 16)]
    amd = hints.inspect_file(DATA / "triton_aot" / "gfx942" / "hist_kernel.ttir")
    assert amd["kernels"][0]["hint_status"] == {"pointers": 2, "with_divisibility": 2, "with_pointer_range": 2,
                                                "missing_divisibility": [], "missing_pointer_range": []}
    assert amd["counts"]["atomic"] == 1 and amd["counts"]["load"] == 1


def test_inspect_hand_written_source_counts_calls_and_says_hints_come_at_launch() -> None:
    found = hints.inspect_file(DATA / "triton_aot" / "make_fixtures.py")
    assert [k["name"] for k in found["kernels"]] == ["add_kernel", "hist_kernel", "dot_kernel"]
    assert found["counts"]["atomic_add"] == 1 and found["counts"]["dot"] == 1
    assert found["notes"] and "inspect the .ttir" in found["notes"][0]


def test_the_command_line_and_the_steps_import_neither_torch_nor_triton() -> None:
    """`dcuopt triton summarize/collect/inspect/scan/report` run where torch is missing; the GPU steps import it
    inside the function that needs it."""
    import subprocess
    import sys

    code = ("import sys, pytest_dcuopt.cli.main, pytest_dcuopt.triton_flow.replay, pytest_dcuopt.triton_flow.fallback, "
            "pytest_dcuopt.triton_flow.capture; print(sorted(m for m in ('torch', 'triton') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"
