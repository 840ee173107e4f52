"""The regression gate end to end (--dcuopt-compare, docs/gating.md): two real runs of one fixture case whose
kernels read environment variables, so the same sources are slower, faster or wrong in the second run
(tests/data/cases/gate_slowdown). Black-box: only the plugin's output, state.json, JUnit XML and the step summary."""
from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CASES

CASE = CASES / "gate_slowdown"
QUICK = ("--dcuopt-max-time=0.3", "--dcuopt-min-samples=3", "--dcuopt-warmup=0.01", "--dcuopt-examples=10",
         "--dcuopt-interleave=0", "-p", "no:cacheprovider")  # no A/B rounds: the gate reads each branch's own samples
# The verdicts' rule is decided in tests/unit/gate/ from fixed samples; here only effects far beyond the
# noise. On a busy shared 2-core machine two sessions of one kernel differed by up to 4x, so the test's margin is about
# 10x for the ~0.1 ms branches (an absolute floor of 1 ms) and the injected work (WORK dependent steps per element)
# makes a branch about 70x slower or faster (3 steps: 27x in one run on that machine).
LOOSE = ("--dcuopt-compare-floor-us=1000",)
WORK = "8"
ENV = ("DCUOPT_GATE_SLOW_WORK", "DCUOPT_GATE_FAST_WORK", "DCUOPT_GATE_BREAK", "GITHUB_STEP_SUMMARY")


def run(pytester: pytest.Pytester, cache: Path, run_dir: str, *args: str) -> pytest.RunResult:
    if not (pytester.path / CASE.name).exists():
        shutil.copytree(CASE, pytester.path / CASE.name)
    return pytester.runpytest_subprocess(CASE.name, f"--dcuopt-cache-dir={cache}",
                                         f"--dcuopt-run-dir={pytester.path / run_dir}", *QUICK, *args)


def gates(pytester: pytest.Pytester, run_dir: str) -> dict[str, Any]:
    state = json.loads((pytester.path / run_dir / "state.json").read_text())
    return {name: branch["gate"] for name, branch in
            state["cases"]["gate_slowdown"]["toolchains"]["cpu"]["branches"].items()}


def failure_text(result: pytest.RunResult, test_id: str) -> str:
    lines = result.stdout.lines
    start = next(i for i, line in enumerate(lines) if line.startswith("_") and f" {test_id} " in line)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith(("___", "==="))), len(lines))
    return "\n".join(lines[start + 1:end])


def test_a_slower_branch_fails_its_benchmark_and_a_broken_one_is_named_a_regression(
        pytester: pytest.Pytester, shared_build_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DCUOPT_GATE_FAST_WORK", WORK)  # speeds_up is slow in the first run only
    run(pytester, shared_build_cache, "first").assert_outcomes(passed=10)

    monkeypatch.delenv("DCUOPT_GATE_FAST_WORK")
    monkeypatch.setenv("DCUOPT_GATE_SLOW_WORK", WORK)
    monkeypatch.setenv("DCUOPT_GATE_BREAK", "1")
    step_summary = pytester.path / "step_summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
    junit = pytester.path / "junit.xml"
    second = run(pytester, shared_build_cache, "second", f"--dcuopt-compare={pytester.path / 'first' / 'state.json'}",
                 *LOOSE, f"--junitxml={junit}")
    second.assert_outcomes(passed=7, failed=2, skipped=1)  # breaks: correctness fails, its benchmark is skipped

    slow = failure_text(second, "test_benchmark_cpu[slows_down]")
    assert "SLOW vs the baseline run" in slow and "gate_slowdown/cpu/slows_down median" in slow
    assert "interval" in slow and "first/state.json" in slow
    assert "REGRESSION (correctness)" in failure_text(second, "test_correctness_cpu[breaks]")

    verdicts = gates(pytester, "second")
    found = {name: gate["verdict"] for name, gate in verdicts.items()}
    assert {name: found[name] for name in ("slows_down", "speeds_up", "breaks")} == {
        "slows_down": "SLOW", "speeds_up": "FAST", "breaks": "NOT TIMED"}, found
    # The unchanged branches are timed and never SLOW (their tests pass). Which of SAME, FAST or AMBIGUOUS they get
    # is a question of the machine's load, not of the rule: the unit tests decide that from fixed samples.
    assert found["baseline"] != "SLOW" and found["steady"] != "SLOW", found
    assert verdicts["baseline"]["change"] is not None and verdicts["steady"]["change"] is not None
    assert verdicts["breaks"]["regressions"] == ["correctness"]
    assert verdicts["slows_down"]["change"]["ratio_interval"][0] > 10
    assert all(not gate["regressions"] for name, gate in verdicts.items() if name != "breaks")

    cases = {case.get("name"): case for case in ET.parse(junit).getroot().iter("testcase")}
    failure = cases["test_benchmark_cpu[slows_down]"].find("failure")
    assert failure is not None and "SLOW vs the baseline run" in failure.get("message", "")
    assert cases["test_benchmark_cpu[steady]"].find("failure") is None

    summary = step_summary.read_text()
    assert "## pytest_dcuopt gate vs baseline" in summary
    assert any("| slows_down " in line and "| SLOW " in line for line in summary.splitlines())
    assert "## Gate vs baseline" in (pytester.path / "second" / "summary.md").read_text()
    second.stdout.fnmatch_lines(["*Gate vs baseline*", "| gate_slowdown | cpu*| slows_down*| SLOW *"])

    # A build with other flags is not comparable: refused, naming the difference, and nothing fails.
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    third = run(pytester, shared_build_cache, "third", "--dcuopt-compare=latest", "--dcuopt-flags=-O1",
                "-k", "benchmark and steady")
    third.assert_outcomes(passed=1, deselected=9)
    refused = gates(pytester, "third")["steady"]
    assert refused["verdict"] == "REFUSED"
    assert "build command differs" in refused["reason"] and "-O1" in refused["reason"]
    third_state = json.loads((pytester.path / "third" / "state.json").read_text())
    assert third_state["gate"]["baseline"] == str((pytester.path / "second" / "state.json").resolve())


def test_a_missing_baseline_stops_the_run_before_any_test(pytester: pytest.Pytester, shared_build_cache: Path) -> None:
    result = run(pytester, shared_build_cache, "only", "--dcuopt-compare=latest")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--dcuopt-compare=latest*does not exist*run once without --dcuopt-compare*"])


def test_an_isa_check_that_passed_and_now_fails_is_named_a_regression(
        pytester: pytest.Pytester, shared_build_cache: Path) -> None:
    """isa_vector_add: `simd` passes its x86 isa mark; after its source is replaced by the scalar baseline's it
    fails, and the failure says it passed in the baseline run. The baseline, failing both times, is no regression."""
    case = pytester.path / "isa_vector_add"
    shutil.copytree(CASES / "isa_vector_add", case)
    common = ("isa_vector_add", f"--dcuopt-cache-dir={shared_build_cache}", *QUICK, "-k", "test_isa_cpu")
    first = pytester.runpytest_subprocess(*common, f"--dcuopt-run-dir={pytester.path / 'first'}")
    first.assert_outcomes(passed=1, failed=1)
    shutil.copy(case / "kernel.cpp", case / "branches" / "simd" / "kernel.cpp")
    second = pytester.runpytest_subprocess(*common, f"--dcuopt-run-dir={pytester.path / 'second'}",
                                           f"--dcuopt-compare={pytester.path / 'first'}")
    second.assert_outcomes(failed=2)
    assert failure_text(second, "test_isa_cpu[simd]").startswith("REGRESSION (isa): in the baseline run")
    assert "REGRESSION" not in failure_text(second, "test_isa_cpu[baseline]")
    state = json.loads((pytester.path / "second" / "state.json").read_text())
    branches = state["cases"]["isa_vector_add"]["toolchains"]["cpu"]["branches"]
    assert branches["simd"]["gate"]["regressions"] == ["isa"] and branches["baseline"]["gate"]["regressions"] == []
