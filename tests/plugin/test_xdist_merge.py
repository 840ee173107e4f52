"""A run under xdist keeps every failure and toolchain and agrees with a serial run; the plugin runs without xdist.

These tests depend only on the plugin's external behaviour: pytest runs in a subprocess (pytester), the
state.json / summary.md they write, and their terminal output. Nothing is imported from pytest_dcuopt.
The fixture cases are in tests/data/cases (see its README.md).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import CASES
from tests.plugin.run_results import branches, run_cases, state_of


def test_xdist_keeps_failures_and_toolchains_and_agrees_with_a_serial_run(pytester: pytest.Pytester,
                                                                         shared_build_cache: Path) -> None:
    """Under -n 2 a branch that failed correctness stays `correct: false` (never null) in the merged state.json and
    is never champion, `toolchains` is filled in, and correct / failure / champion match a -n 0 run."""
    parallel = run_cases(pytester, shared_build_cache, CASES / "xdist_merge", run_dir="run_n2", args=("-n", "2"))
    assert parallel.ret == 1
    state2 = state_of(pytester, "run_n2")
    drops_tail = branches(state2, "xdist_merge")["drops_tail"]
    assert drops_tail["correct"] is False
    assert drops_tail["failure"] is not None
    assert drops_tail["champion"] is False
    assert state2["toolchains"] != {}
    assert state2["toolchains"]["cpu"]["capability"] == "run"

    serial = run_cases(pytester, shared_build_cache, CASES / "xdist_merge", run_dir="run_n0", args=("-n", "0"))
    serial.assert_outcomes(passed=2, failed=1, skipped=1)
    state0 = state_of(pytester, "run_n0")
    found0, found2 = branches(state0, "xdist_merge"), branches(state2, "xdist_merge")
    assert set(found0) == set(found2) == {"baseline", "drops_tail"}
    for name in found0:
        for field in ("correct", "champion"):
            assert found2[name][field] == found0[name][field], (name, field)
        assert (found2[name]["failure"] is None) == (found0[name]["failure"] is None), name
    assert (state2["cases"]["xdist_merge"]["toolchains"]["cpu"]["champion"]
            == state0["cases"]["xdist_merge"]["toolchains"]["cpu"]["champion"] == "baseline")
    assert {k: v["capability"] for k, v in state2["toolchains"].items()} == \
        {k: v["capability"] for k, v in state0["toolchains"].items()}


def test_runs_without_xdist(run_plugin) -> None:
    """`-p no:xdist` must not end in INTERNALERROR (the plugin's xdist hooks must be optional)."""
    result = run_plugin(CASES / "signature_edge", args=("-p", "no:xdist", "-k", "correctness"))
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    result.assert_outcomes(passed=2, deselected=2)
