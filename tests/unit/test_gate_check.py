"""tools/device/gate_check.py (the gate's H200 figures; the GPU run needs a GPU, this machine has none): its judging
and summaries on hand-made input, and its in-process measurement end to end on the CPU toolchain with real samples."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.conftest import CASES

TOOL = Path(__file__).parents[2] / "tools" / "device" / "gate_check.py"


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gate_check", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def samples(median_ms: float, n: int = 40, spread: float = 0.002) -> list[float]:
    """n samples around median_ms, a deterministic spread of +-spread (relative)."""
    return [median_ms * (1 + spread * ((i % 9) - 4) / 4) for i in range(n)]


def test_pytest_benchmarks_own_check_fails_above_5_percent_of_the_median(tool: ModuleType) -> None:
    assert not tool.median_check_fails(1.0, 1.049)
    assert tool.median_check_fails(1.0, 1.051)
    assert not tool.benchmark_fails(samples(0.05), samples(0.05 * 1.04))
    assert tool.benchmark_fails(samples(0.05), samples(0.05 * 1.06))


def test_a_pair_is_judged_by_the_gate_rule_and_retried_only_while_ambiguous(tool: ModuleType) -> None:
    same = tool.judge_pair("A/A", 0, samples(0.05), samples(0.05))
    assert (same["gate"], same["attempts"], same["benchmark_fails"]) == ("SAME", 1, False)
    slow = tool.judge_pair("slowed", 0, samples(0.05), samples(0.05 * 1.10))
    assert (slow["gate"], slow["benchmark_fails"]) == ("SLOW", True) and slow["change"] == pytest.approx(0.10, 0.01)
    # +4.5% with a wide spread: the interval straddles the 5% margin; a re-measurement pools in and decides it
    before, after = samples(0.05, n=12, spread=0.08), samples(0.05 * 1.045, n=12, spread=0.08)
    calls: list[int] = []

    def remeasure() -> list[float]:
        calls.append(1)
        return samples(0.05 * 1.10, n=400, spread=0.001)

    retried = tool.judge_pair("slowed", 1, before, after, remeasure, threshold=0.05)
    assert (retried["gate"], retried["attempts"], len(calls), retried["samples"]) == ("SLOW", 2, 1, [12, 412])
    assert retried["benchmark_fails"] is False  # pytest-benchmark sees the first measurement only, as in a session
    never = tool.judge_pair("slowed", 2, before, after, threshold=0.05)
    assert (never["gate"], never["attempts"]) == ("AMBIGUOUS", 1)  # no remeasure: no retry


def pair(kind: str, gate: str, fails: bool, change: float = 0.0) -> dict[str, Any]:
    return {"kind": kind, "index": 0, "gate": gate, "attempts": 1, "change": change, "before_median_us": 50.0,
            "benchmark_fails": fails}


def test_rates_say_whether_issue_15s_targets_are_met(tool: ModuleType) -> None:
    pairs = ([pair("A/A", "SAME", False)] * 99 + [pair("A/A", "SLOW", True, 0.06)]
             + [pair("slowed", "SLOW", True, 0.05)] * 95 + [pair("slowed", "AMBIGUOUS", False, 0.04)] * 5)
    found = tool.rates(pairs)
    assert found["A/A"]["gate_verdicts"] == {"SAME": 99, "SLOW": 1}
    assert (found["A/A"]["gate_slow_rate"], found["A/A"]["target_met"]) == (0.01, True)
    assert (found["slowed"]["gate_slow_rate"], found["slowed"]["benchmark_fail_rate"]) == (0.95, 0.95)
    assert found["slowed"]["target_met"] is True
    short = tool.rates(pairs[:50] + pairs[100:150])  # too few comparisons: never met, whatever the rate
    assert short["A/A"]["target_met"] is False and short["slowed"]["target_met"] is False
    missed = tool.rates([pair("slowed", "SLOW", True)] * 94 + [pair("slowed", "SAME", False)] * 6)
    assert missed["slowed"]["target_met"] is False
    table = tool.render({"in_process": None, "sessions": {"rates": found}, "locks": None})
    assert "| A/A | 100 | SAME 99, SLOW 1 | 1.0% | 1.0% |" in table and "| yes |" in table


def hold(at: float, until: float) -> dict[str, Any]:
    return {"name": "gpu-0", "held": True, "waited_s": 0.1, "acquired_at": at, "released_at": until}


def lock_state(*timings: tuple[float, float]) -> dict[str, Any]:
    branches = {f"b{i}": {"correct": True, "timing": {"device_lock": hold(*span)}} for i, span in enumerate(timings)}
    return {"cases": {"c": {"toolchains": {"cuda": {"branches": branches}}}}}


def test_the_lock_report_finds_overlaps_and_sessions_that_never_ran_together(tool: ModuleType) -> None:
    apart = tool.lock_report({"a": lock_state((0, 1), (2, 3)), "b": lock_state((1, 2), (3, 4))})
    assert (apart["ok"], apart["overlapping"], apart["timed_during_a_common_period"]) == (True, [], True)
    clash = tool.lock_report({"a": lock_state((0, 1), (2, 3)), "b": lock_state((0.5, 1.5))})
    assert clash["ok"] is False and len(clash["overlapping"]) == 1
    one_after_the_other = tool.lock_report({"a": lock_state((0, 1)), "b": lock_state((5, 6))})
    assert one_after_the_other["timed_during_a_common_period"] is False and one_after_the_other["ok"] is False
    incomplete = lock_state((0, 1))
    incomplete["cases"]["c"]["toolchains"]["cuda"]["branches"]["lost"] = {"correct": True, "timing": None}
    assert tool.lock_report({"a": incomplete, "b": lock_state((0.5, 2))})["complete"] is False


@pytest.mark.e2e
def test_measure_on_the_cpu_takes_real_samples_and_flags_a_large_injected_slowdown(
        tool: ModuleType, tmp_path: Path, shared_build_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The GPU path with the CPU toolchain: three kernel workers of one build, the third started with the chain 4x
    as long (a several-fold effect, so the verdicts do not hinge on this machine's noise); two rounds."""
    monkeypatch.setenv("DCUOPT_LOCK_DIR", str(tmp_path / "locks"))
    out = tmp_path / "inproc.json"
    command = [sys.executable, str(TOOL), "measure", "--case", str(CASES / "gate_injected"), "--toolchain", "cpu",
               "--cache", str(shared_build_cache), "--work", str(tmp_path), "--out", str(out), "--rounds", "2",
               "--percent", "300", "--max-time", "0.2"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    report = json.loads(out.read_text())
    assert report["rounds"] == 2 and len(report["pairs"]) == 4
    assert report["injected_slowdown_measured"] > 1.5  # 4x the chain: far more than twice the time
    slowed = [p for p in report["pairs"] if p["kind"] == "slowed"]
    assert [p["gate"] for p in slowed] == ["SLOW", "SLOW"] and all(p["benchmark_fails"] for p in slowed)
    assert all(p["samples"][0] >= 2 and p["samples"][1] >= 2 for p in report["pairs"])
    assert {p["kind"] for p in report["pairs"]} == {"A/A", "slowed"}
    summary = tmp_path / "summary.json"
    tool.main(["summary", "--measure", str(out), "--out", str(summary), "--md", str(tmp_path / "summary.md")])
    assert "pairs" not in json.loads(summary.read_text())["in_process"]  # the small summary leaves the detail out
    assert "| slowed | 2 | SLOW 2 | 100.0% | 100.0% |" in (tmp_path / "summary.md").read_text()
