"""Benchmark sizes end to end (ref.py `bench_sizes`, --dcuopt-sizes; docs/usage.md#benchmark-sizes): the fixture
case tests/data/cases/bench_sizes declares `small` (N = 4096) and `large` (N = 131072); its branch wrong_past_64k is
right at every correctness dim and wrong from element 65536 on, so only the `large` size can catch it.
Black-box: the plugin's output, state.json and summary.md."""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CASES, FAST

CASE = CASES / "bench_sizes"
BRANCHES = ("baseline", "unrolled4", "wrong_past_64k")


def run(pytester: pytest.Pytester, cache: Path, run_dir: str, *args: str) -> pytest.RunResult:
    if not (pytester.path / CASE.name).exists():
        shutil.copytree(CASE, pytester.path / CASE.name)
    return pytester.runpytest_subprocess(CASE.name, f"--dcuopt-cache-dir={cache}",
                                         f"--dcuopt-run-dir={pytester.path / run_dir}", "-v", *FAST, *args)


def cpu_result(pytester: pytest.Pytester, run_dir: str) -> dict[str, Any]:
    state = json.loads((pytester.path / run_dir / "state.json").read_text())
    assert "validation_error" not in state
    result: dict[str, Any] = state["cases"]["bench_sizes"]["toolchains"]["cpu"]
    return result


def test_every_branch_is_timed_at_each_size_with_a_champion_per_size(pytester: pytest.Pytester,
                                                                     shared_build_cache: Path) -> None:
    result = run(pytester, shared_build_cache, "run")
    result.assert_outcomes(passed=8, failed=1)  # 3 correctness, 6 benchmarks: wrong_past_64k fails at `large`
    result.stdout.fnmatch_lines(["*test_benchmark_cpu[[]baseline-small[]] PASSED*",
                                 "*test_benchmark_cpu[[]wrong_past_64k-small[]] PASSED*",
                                 "*test_benchmark_cpu[[]unrolled4-large[]] PASSED*",
                                 "*test_benchmark_cpu[[]wrong_past_64k-large[]] FAILED*"])
    result.stdout.fnmatch_lines(["*wrong outputs on the call before the first timed call*N*131072*benchmark size*"])
    cpu = cpu_result(pytester, "run")
    assert {size: info["dims"] for size, info in cpu["sizes"].items()} == {"small": {"N": 4096},
                                                                           "large": {"N": 131072}}
    for size in ("small", "large"):
        assert cpu["sizes"][size]["champion"] in ("baseline", "unrolled4")
        for name in ("baseline", "unrolled4"):
            entry = cpu["branches"][name]["sizes"][size]
            assert entry["timing"]["dims"] == cpu["sizes"][size]["dims"]
            assert entry["timing"]["timed_calls_checked"] >= 1 and entry["throughput"]["gbps"] > 0
            assert entry["champion"] is (cpu["sizes"][size]["champion"] == name)
        assert cpu["branches"]["unrolled4"]["sizes"][size]["timing"]["interleaved"]["rounds"] == 4
    wrong = cpu["branches"]["wrong_past_64k"]
    assert wrong["correct"] is False and wrong["error"]["kind"] == "timed calls wrong"
    assert wrong["error"]["dims"] == {"N": 131072} and wrong["sizes"]["large"]["timing"] is None
    assert not any(entry["champion"] for entry in wrong["sizes"].values())
    assert cpu["branches"]["baseline"]["timing"] is None  # no timing at the default dims: the sizes hold it
    summary = (pytester.path / "run" / "summary.md").read_text()
    assert "Champion per benchmark size: small (N=4096): " in summary and "; large (N=131072): " in summary
    assert "GB/s by benchmark size" in summary and "| large | wrong_past_64k | FAIL" in summary


def test_sizes_option_picks_sizes_and_the_gate_compares_per_size(pytester: pytest.Pytester,
                                                                  shared_build_cache: Path) -> None:
    first = run(pytester, shared_build_cache, "first", "-k", "benchmark and not wrong", "--dcuopt-sizes=large")
    first.assert_outcomes(passed=2, deselected=4)  # one size: 3 correctness tests and wrong_past_64k-large left out
    assert set(cpu_result(pytester, "first")["sizes"]) == {"large"}
    # A floor of 1 s: the 2-core machine's noise can never make SLOW here; the point is what gets compared.
    second = run(pytester, shared_build_cache, "second", "-k", "benchmark and not wrong", "--dcuopt-sizes=small,large",
                 f"--dcuopt-compare={pytester.path / 'first'}", "--dcuopt-compare-floor-us=1000000")
    second.assert_outcomes(passed=4, deselected=5)
    cpu = cpu_result(pytester, "second")
    for name in ("baseline", "unrolled4"):
        gates = {size: entry["gate"] for size, entry in cpu["branches"][name]["sizes"].items()}
        assert gates["large"]["verdict"] in ("SAME", "AMBIGUOUS"), gates["large"]
        assert gates["large"]["change"]["before_median_ms"] > 0
        assert gates["small"]["verdict"] == "NEW" and "at size small" in gates["small"]["reason"]


def test_an_unknown_size_is_a_usage_error_naming_the_known_ones(pytester: pytest.Pytester,
                                                                 shared_build_cache: Path) -> None:
    result = run(pytester, shared_build_cache, "run", "--dcuopt-sizes=small,huge", "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--dcuopt-sizes: unknown benchmark size(s) huge; the collected cases declare: "
                                 "small (bench_sizes/cpu); large (bench_sizes/cpu)*"])


def test_benchmark_disable_makes_one_checked_call_per_size(pytester: pytest.Pytester,
                                                            shared_build_cache: Path) -> None:
    result = run(pytester, shared_build_cache, "run", "--benchmark-disable", "-k", "benchmark")
    result.assert_outcomes(passed=5, failed=1, deselected=3)  # the large size's check catches wrong_past_64k
    result.stdout.fnmatch_lines(["*test_benchmark_cpu[[]wrong_past_64k-large[]] FAILED*"])
    cpu = cpu_result(pytester, "run")
    for name in ("baseline", "unrolled4"):
        for size in ("small", "large"):
            entry = cpu["branches"][name]["sizes"][size]
            assert entry["timing"] is None and "one checked call at this size's dims" in entry["skipped"]
    wrong = cpu["branches"]["wrong_past_64k"]
    assert wrong["correct"] is False and wrong["failure"]["dims"] == {"N": 131072}
    assert "--dcuopt-dims" in wrong["failure"]["reproduce"]
