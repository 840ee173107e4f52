"""`dcuopt compare-timers` (cli.compare_timers): its table, reading each timer's output, which timers can run, and
the children's loader on a real CPU build. The GPU timers themselves need a GPU: docs/gpu-timing.md."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_dcuopt.cli import compare_timers as ct
from tests.conftest import CASES

NCU_HEADER = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",'
              '"Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"')


def ncu_row(index: int, kernel: str, ns: float, unit: str = "ns") -> str:
    return (f'"{index}","1","python","host","{kernel}","1","7","(256, 1, 1)","(4096, 1, 1)","0","9.0",'
            f'"Command line profiler metrics","gpu__time_duration.sum","{unit}","{ns:,}"')


def test_the_table_gives_each_timer_its_ratio_to_ncu_and_says_why_one_is_missing() -> None:
    figures = [ct.Figure("harness", 0.0909, "median of 80 cold samples"), ct.Figure("do_bench", 0.0982, "median"),
               ct.Figure("nvbench", why_not="cuda.bench is not installed"), ct.Figure("ncu", 0.0904, "median of 7")]
    assert ct.table(figures).splitlines() == [
        "| timer | time (us) | vs ncu | what it is |", "|---|---|---|---|",
        "| harness | 90.9 | +0.6% | median of 80 cold samples |", "| do_bench | 98.2 | +8.6% | median |",
        "| nvbench | - | - | not measured: cuda.bench is not installed |", "| ncu | 90.4 | (reference) | median of 7 |"]
    alone = ct.table([ct.Figure("harness", 1.349, "median"), ct.Figure("ncu", why_not="ncu is not on PATH")])
    assert "| harness | 1349 | - (no ncu figure) | median |" in alone


def state(record: dict[str, Any]) -> dict[str, Any]:
    return {"cases": {"vector_add": {"toolchains": {"cuda": {"branches": {"float4": record}}}}}}


def test_the_harness_figure_and_its_dims_come_from_the_sessions_record() -> None:
    timing = {"median_ms": 0.0909, "rounds": 80, "mode": "cold", "timer": "cuda events", "dims": {"N": 1 << 25}}
    figure, dims = ct.harness_figure(state({"timing": timing}), "cuda", "float4")
    assert (figure.ms, figure.statistic, dims) == (0.0909, "median of 80 cold samples (cuda events)", {"N": 1 << 25})
    sized = {"timing": None, "sizes": {"dram": {"timing": {**timing, "dims": {"N": 8}}}}}
    assert ct.harness_figure(state(sized), "cuda", "float4")[1] == {"N": 8}
    skipped, none = ct.harness_figure(state({"timing": None, "skipped": "no CUDA device"}), "cuda", "float4")
    assert (skipped.ms, skipped.why_not, none) == (None, "float4: no CUDA device", {})
    assert "no cuda record of branch 'other'" in ct.harness_figure(state({}), "cuda", "other")[0].why_not


def test_a_childs_result_line_is_read_and_a_missing_one_says_what_the_child_printed() -> None:
    output = 'warming up\n' + ct.RESULT + json.dumps({"ms": 0.1, "statistic": "do_bench median"}) + "\n"
    assert ct.child_figure("do_bench", output) == ct.Figure("do_bench", 0.1, "do_bench median")
    failed = ct.child_figure("nvbench", "Traceback ...\nRuntimeError: no device\n")
    assert failed.ms is None and "no result" in failed.why_not and "RuntimeError: no device" in failed.why_not


def test_ncu_sums_the_kernels_of_each_call_between_markers() -> None:
    rows = [ncu_row(0, "void at::native::spin_kernel(long)", 1_000_000)]
    for call in range(3):  # a two-kernel solve per call, after a marker
        first = 1 + 3 * call
        rows += [ncu_row(first, "scale_kernel", 60_000 + call * 1000), ncu_row(first + 1, "add_kernel", 40.0, "us"),
                 ncu_row(first + 2, "void at::native::spin_kernel(long)", 1_000_000)]
    text = "==PROF== Connected to process\n" + NCU_HEADER + "\n" + "\n".join(rows[:-1]) + "\n"
    assert ct.ncu_call_times_ms(text) == pytest.approx([0.1, 0.101, 0.102])
    with pytest.raises(ValueError, match="no ncu CSV table"):
        ct.ncu_call_times_ms("==ERROR== no kernels were profiled\n")


def test_nvbench_reports_its_cold_gpu_mean() -> None:
    report = {"benchmarks": [{"states": [{"summaries": [
        {"tag": "nv/cold/time/cpu/mean", "data": [{"name": "value", "type": "float64", "value": "0.00011"}]},
        {"tag": "nv/cold/time/gpu/mean", "data": [{"name": "value", "type": "float64", "value": "9.75e-05"}]}]}]}]}
    assert ct.nvbench_mean_ms(report) == pytest.approx(0.0975)
    with pytest.raises(ValueError, match="no 'nv/cold/time/gpu/mean' summary"):
        ct.nvbench_mean_ms({"benchmarks": []})


def test_which_timers_can_run_says_why_not() -> None:
    assert ct.why_unavailable("harness", "cpu") is None
    assert "the cpu toolchain runs on the host" in (ct.why_unavailable("do_bench", "cpu") or "")
    assert ct.why_unavailable("ncu", "hip") == "Nsight Compute profiles NVIDIA GPUs only"
    assert "not installed" in (ct.module_missing("no_such_module_here.sub", "pip install it") or "")


def test_the_children_load_the_branch_as_a_worker_binds_it(tmp_path: Path) -> None:
    binding = ct.load_binding(CASES / "gate_slowdown", "steady", "cpu", {"N": 64}, tmp_path / "cache")
    binding.launch()
    with pytest.raises(SystemExit, match="no cpu source for branch 'nope'"):
        ct.load_binding(CASES / "gate_slowdown", "nope", "cpu", {"N": 64}, tmp_path / "cache")
