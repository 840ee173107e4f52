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


def test_work_left_to_a_thread_or_a_process_is_refused_and_an_openmp_solve_is_not(
        run_plugin, pytester: pytest.Pytester) -> None:
    result = run_plugin(CASES / "guard_cpu", args=("-k", "benchmark", "--dcuopt-hot"))
    result.assert_outcomes(passed=2, failed=2)
    branches = _branches(pytester, "guard_cpu", "cpu")
    refused = branches["work_after_return"]
    assert refused["error"]["kind"] == "timing refused" and refused["timing"] is None and not refused["champion"]
    assert "kept running" in refused["error"]["message"] and "after a single call returned" in \
        refused["error"]["message"]
    # The spinner the branch left was watched and ended before its own timing, which was refused.
    spinner = branches["leaves_spinner"]
    assert spinner["error"]["kind"] == "timing refused" and spinner["timing"] is None and not spinner["champion"]
    assert "kept working after its calls returned" in spinner["error"]["message"]
    for honest in ("baseline", "omp_joined"):
        assert branches[honest]["timing"]["bounds"]["batch_per_call_s"] is not None, honest
        assert branches[honest]["error"] is None, (honest, branches[honest]["error"])
    # The workers started before a branch's timing were stopped during it (the baseline is timed first, alone).
    containment = branches["omp_joined"]["device"]["containment"]
    assert containment["stopped_during_timing"] >= 1
    assert containment["no_new_privs"] == "applied" and containment["seccomp"].startswith("applied")
    # A fresh worker process per branch: no two branches were timed in the same process.
    pids = [branch["device"]["containment"]["worker_pid"] for name, branch in branches.items() if branch["timing"]]
    assert len(pids) == len(set(pids)) == 2


def test_a_slowed_clock_is_refused(run_plugin, pytester: pytest.Pytester) -> None:
    result = run_plugin(CASES / "guard_python", args=("-k", "benchmark", "--dcuopt-hot"))
    result.assert_outcomes(passed=1, failed=1)
    branches = _branches(pytester, "guard_python", "python")
    assert branches["slow_clock"]["error"]["kind"] == "timing refused"
    assert not branches["slow_clock"]["champion"] and branches["baseline"]["champion"]


def test_a_kernel_that_rewrites_its_reference_fails_the_run_naming_the_file(run_plugin,
                                                                            pytester: pytest.Pytester) -> None:
    result = run_plugin(CASES / "guard_tamper", args=("-k", "correctness"))
    assert result.ret != 0
    ref = pytester.path / "guard_tamper" / "ref.py"
    assert "rewritten by a kernel" in ref.read_text()  # the attack happened: the check below is what catches it
    output = result.stdout.str() + result.stderr.str()
    assert f"{ref} (a file of the case guard_tamper) was rewritten during this run" in output
    state = json.loads((pytester.path / "run" / "state.json").read_text())
    assert len(state["integrity"]["changed"]) == 1 and state["containment"]["harness"].startswith("applied")
    assert state["cases"]["guard_tamper"]["toolchains"]["cpu"]["branches"]["honest_copy"]["correct"] is True
