"""Timings a kernel cannot bend: the pytest process bounds the worker's figures with what it measures itself, and
nothing another branch left running shares the cores with the branch being timed (run/isolation.py,
timing/bounds.py, run/containment.py). Each cheating branch has an honest look-alike that must not be flagged."""
from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import CASES


def _branches(pytester: pytest.Pytester, case: str, toolchain: str) -> dict[str, Any]:
    state = json.loads((pytester.path / "run" / "state.json").read_text())
    return dict(state["cases"][case]["toolchains"][toolchain]["branches"])


def test_work_left_to_a_thread_is_refused_and_an_openmp_solve_is_not(run_plugin, pytester: pytest.Pytester) -> None:
    result = run_plugin(CASES / "guard_cpu", args=("-k", "benchmark", "--dcuopt-hot"))
    result.assert_outcomes(passed=3, failed=1)
    branches = _branches(pytester, "guard_cpu", "cpu")
    refused = branches["work_after_return"]
    assert refused["error"]["kind"] == "timing refused" and refused["timing"] is None and not refused["champion"]
    assert "back-to-back calls timed by the pytest process" in refused["error"]["message"] or \
        "still running" in refused["error"]["message"]
    for honest in ("baseline", "omp_joined", "leaves_spinner"):
        assert branches[honest]["timing"]["bounds"]["batch_per_call_s"] is not None, honest
        assert branches[honest]["error"] is None, (honest, branches[honest]["error"])
    # The spinner the branch left was ended before its own timing; the other workers were stopped during each.
    containment = branches["leaves_spinner"]["device"]["containment"]
    assert containment["ended_before_timing"] >= 1
    assert branches["baseline"]["device"]["containment"]["stopped_during_timing"] >= 1
    assert containment["no_new_privs"] == "applied"


def test_a_slowed_clock_is_refused(run_plugin, pytester: pytest.Pytester) -> None:
    result = run_plugin(CASES / "guard_python", args=("-k", "benchmark", "--dcuopt-hot"))
    result.assert_outcomes(passed=1, failed=1)
    branches = _branches(pytester, "guard_python", "python")
    assert branches["slow_clock"]["error"]["kind"] == "timing refused"
    assert not branches["slow_clock"]["champion"] and branches["baseline"]["champion"]
