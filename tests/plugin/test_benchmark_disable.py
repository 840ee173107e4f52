"""`--benchmark-disable`, end to end on the CPU toolchain.

* `--benchmark-disable` does what pytest-benchmark users expect: each benchmark test checks the kernel at the default
  dims (one call, and one more on other inputs in the same buffers), keeps no statistics, and the record says why it
  has no timing;
* every selected branch is built in the background while the tests run, `--dcuopt-build-jobs` at a time, and the
  terminal says what the builds did;
* the plugin's timing options: side figures off unless `--dcuopt-side-figures`.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest

from pytest_dcuopt.bench.run import BENCHMARKS_DISABLED
from tests.conftest import CASES

RunPlugin = Callable[..., pytest.RunResult]  # tests/conftest.py's run_plugin fixture


def state(pytester: pytest.Pytester) -> dict[str, Any]:
    return json.loads((pytester.path / "run" / "state.json").read_text())


def branches(pytester: pytest.Pytester) -> dict[str, dict[str, Any]]:
    return state(pytester)["cases"]["gate_slowdown"]["toolchains"]["cpu"]["branches"]


def test_benchmark_disable_runs_each_benchmark_once_checked_and_records_no_timing(
        run_plugin: RunPlugin, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DCUOPT_GATE_BREAK", "1")  # `breaks` writes y[0] wrong
    result = run_plugin(CASES / "gate_slowdown", args=("-k", "benchmark", "--benchmark-disable",
                                                       "--dcuopt-build-jobs=2"))
    result.assert_outcomes(passed=4, failed=1, deselected=5)
    output = result.stdout.str()
    assert "dcuopt: building 5 branches in the background, 2 at a time" in output, output
    done = re.search(r"dcuopt: background builds: (\d+) built or reused(?:, (\d+) built in their own test)?", output)
    assert done is not None and int(done[1]) + int(done[2] or 0) == 5, output
    found = branches(pytester)
    for name in ("baseline", "slows_down", "speeds_up", "steady"):
        record = found[name]
        assert record["timing"] is None and record["skipped"] == BENCHMARKS_DISABLED, record
        # one call, then one at another seed in the same buffers (a result kept per buffer fails there); no
        # correctness verdict here
        assert record["examples"] == 2 and record["correct"] is None
        # built (or reused from the shared test cache) in the background or in its test, as the line above says
        assert record["build"]["command"] and "cached" in record["build"]
    broken = found["breaks"]
    assert broken["correct"] is False and broken["failure"]["stage"] == "before timing"
    assert "gate_slowdown/cpu/breaks is wrong" in broken["failure"]["message"]
    assert state(pytester)["options"]["timing"]["side_figures"] is False
    assert state(pytester)["options"]["build_jobs"] == 2


def test_with_correctness_the_disabled_benchmark_adds_one_call_and_a_wrong_branch_is_skipped(
        run_plugin: RunPlugin, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DCUOPT_GATE_BREAK", "1")
    result = run_plugin(CASES / "gate_slowdown", args=("--benchmark-disable", "--dcuopt-examples=3",
                                                       "--dcuopt-build-jobs=1", "--benchmark-json=bench.json"))
    result.assert_outcomes(passed=8, failed=1, skipped=1)
    found = branches(pytester)
    steady = found["steady"]
    assert steady["correct"] is True and steady["timing"] is None and steady["skipped"] == BENCHMARKS_DISABLED
    assert found["breaks"]["skipped"].startswith("not benchmarked")
    assert "dcuopt: building 5 branches in the background, 1 at a time" in result.stdout.str()
    bench = pytester.path / "bench.json"
    assert not bench.exists() or json.loads(bench.read_text())["benchmarks"] == []  # no statistics
