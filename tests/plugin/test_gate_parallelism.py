"""A run's state.json says how many xdist workers ran it (`scope.workers`), and `--dcuopt-compare` against a baseline
made with another number of workers (here `latest` after an `-n 2` run) warns, in the terminal, summary.md and
state.json, naming both; runs made the same way are gated without it."""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CASES, FAST

CASE = CASES / "python_scale"


def state_of(result: pytest.RunResult) -> dict[str, Any]:
    (line,) = [line for line in result.outlines if line.startswith("state: ")]
    state: dict[str, Any] = json.loads(Path(line.removeprefix("state: ")).read_text())
    return state


def test_a_gate_against_a_run_with_other_xdist_workers_warns_naming_both(pytester: pytest.Pytester,
                                                                        shared_build_cache: Path) -> None:
    shutil.copytree(CASE, pytester.path / CASE.name)
    common = (CASE.name, f"--dcuopt-cache-dir={shared_build_cache}", *FAST)
    gate = ("--dcuopt-compare=latest", "--dcuopt-compare-floor-us=1000000")  # no timing verdict hinges on noise

    parallel = pytester.runpytest_subprocess(*common, "-n", "2")
    parallel.assert_outcomes(passed=2)
    assert state_of(parallel)["scope"]["workers"] == 2

    serial = pytester.runpytest_subprocess(*common, *gate)
    serial.assert_outcomes(passed=2)
    state = state_of(serial)
    assert state["scope"]["workers"] == 0 and state["scope"]["complete"] is True
    warning = ("the baseline ran with 2 xdist workers (-n 2), this run with no xdist workers (-n 0): builds, "
               "collection and the other workers' work share the host with every timing")
    assert state["gate"]["parallelism"]["baseline_workers"] == 2 and state["gate"]["parallelism"]["workers"] == 0
    assert state["gate"]["parallelism"]["warning"].startswith(warning)
    serial.stdout.fnmatch_lines([f"*Warning:*{warning}*"])
    summary = (pytester.path / ".dcuopt" / "runs" / "latest" / "summary.md").read_text()
    assert f"- **Warning:** {warning}" in summary

    again = pytester.runpytest_subprocess(*common, *gate)  # against the serial run: made the same way
    again.assert_outcomes(passed=2)
    assert "parallelism" not in state_of(again)["gate"]
    assert "xdist workers" not in again.stdout.str()
