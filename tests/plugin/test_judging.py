"""The pytest process judges: branches that cheat in ways only that stops (forging the worker's snapshot, computing
only when a call is checked, keeping a result per buffer, choosing their own inputs) fail with a reason and are never
crowned; honest look-alikes (constants built inside a call, threads joined before returning, work in slices) pass.
Fixture cases: tests/data/cases/judged_calls (cpu) and judged_python (python)."""
from __future__ import annotations

import json
import shutil
from typing import Any

import pytest

from tests.conftest import CASES

CHEATS_CPU = ("keeps_result_per_buffers", "computes_when_watched", "forges_its_snapshot")
HONEST_CPU = ("baseline", "caches_constants_in_call", "threads_joined")
CHEATS_PYTHON = ("zeroes_b", "forges_its_snapshot", "computes_once", "computes_when_watched")
HONEST_PYTHON = ("baseline", "in_chunks")


def branches_of(pytester: pytest.Pytester, case: str, toolchain: str) -> tuple[dict[str, Any], dict[str, Any]]:
    state = json.loads((pytester.path / "run" / "state.json").read_text())
    found = state["cases"][case]["toolchains"][toolchain]
    return found, state


def reason(branch: dict[str, Any]) -> str:
    return json.dumps([branch.get("failure"), branch.get("error")])


def test_cpu_cheats_are_caught_with_a_reason_and_the_honest_look_alikes_pass(
        run_plugin, pytester: pytest.Pytester) -> None:
    result = run_plugin(CASES / "judged_calls", args=("--dcuopt-examples=5",))
    toolchain, state = branches_of(pytester, "judged_calls", "cpu")
    branches = toolchain["branches"]
    for name in CHEATS_CPU:
        assert branches[name]["correct"] is False and branches[name]["champion"] is False, name
    assert "new inputs in the same buffers" in reason(branches["keeps_result_per_buffers"])
    assert branches["keeps_result_per_buffers"]["failure"]["stage"] == "correctness"
    assert branches["computes_when_watched"]["error"]["kind"] == "timed calls wrong"
    assert "timed call" in branches["computes_when_watched"]["error"]["call"]
    assert "sent no output 'y' back" in reason(branches["forges_its_snapshot"])
    for name in HONEST_CPU:
        assert branches[name]["correct"] is True and branches[name]["error"] is None, (name, reason(branches[name]))
        assert branches[name]["timing"]["timed_calls_checked"] >= 4  # start, a timed call, new inputs, after
    assert toolchain["champion"] in HONEST_CPU
    run_seed = state["options"]["run_seed"]
    assert isinstance(run_seed, int) and f"'--dcuopt-run-seed={run_seed}'" in \
        branches["keeps_result_per_buffers"]["failure"]["reproduce"]
    result.assert_outcomes(passed=7, failed=3, skipped=2)


def test_python_cheats_are_caught_and_inputs_come_from_the_harness(run_plugin, pytester: pytest.Pytester) -> None:
    result = run_plugin(CASES / "judged_python", args=("--dcuopt-examples=2", "--dcuopt-toolchain=python"))
    toolchain, _ = branches_of(pytester, "judged_python", "python")
    branches = toolchain["branches"]
    for name in CHEATS_PYTHON:
        assert branches[name]["correct"] is False and branches[name]["champion"] is False, name
    assert "values differ" in reason(branches["zeroes_b"])  # b drawn by the harness, not setup()'s zeros
    assert "sent back no value" in reason(branches["forges_its_snapshot"])
    assert "new inputs in the same buffers" in reason(branches["computes_once"])
    assert branches["computes_when_watched"]["error"]["kind"] == "timed calls wrong"
    for name in HONEST_PYTHON:
        assert branches[name]["correct"] is True and branches[name]["error"] is None, (name, reason(branches[name]))
        assert branches[name]["timing"]["timed_calls_checked"] >= 3  # start, a timed call, after
    result.assert_outcomes(passed=5, failed=4, skipped=3)


@pytest.mark.parametrize("selection", [("--benchmark-disable", "-k", "baseline or keeps_result_per_buffers"),
                                       ("-k", "correctness and (baseline or keeps_result_per_buffers)")])
def test_a_result_kept_per_buffer_fails_a_correctness_only_run(run_plugin, pytester: pytest.Pytester,
                                                                selection: tuple[str, ...]) -> None:
    result = run_plugin(CASES / "judged_calls", args=("--dcuopt-examples=5", *selection))
    branches = branches_of(pytester, "judged_calls", "cpu")[0]["branches"]
    cheat = branches["keeps_result_per_buffers"]
    assert cheat["correct"] is False and "new inputs in the same buffers" in reason(cheat)
    assert branches["baseline"]["correct"] is not False
    result.stdout.fnmatch_lines(["FAILED *keeps_result_per_buffers*"])


def test_a_result_kept_per_buffer_found_by_the_search_is_named_as_such(
        run_plugin, pytester: pytest.Pytester, tmp_path: Any) -> None:
    """Dims drawn from a narrow range repeat, so the Hypothesis search itself meets the kept result (the worker
    rebinds new inputs into the same buffers) and may see it not reproduce: the failure still names the cause."""
    narrow = tmp_path / "judged_calls"
    shutil.copytree(CASES / "judged_calls", narrow, ignore=shutil.ignore_patterns(
        "caches_constants_in_call", "computes_when_watched", "forges_its_snapshot", "threads_joined"))
    ref = narrow / "ref.py"
    ref.write_text(ref.read_text().replace('dim_ranges = {"N": (1, 4096)}', 'dim_ranges = {"N": (4093, 4096)}'))
    run_plugin(narrow, args=("--dcuopt-examples=25", "-k", "correctness"))
    cheat = branches_of(pytester, "judged_calls", "cpu")[0]["branches"]["keeps_result_per_buffers"]
    assert cheat["correct"] is False and "new inputs in the same buffers" in reason(cheat), reason(cheat)


def test_a_given_run_seed_is_recorded_and_a_bad_one_refused_up_front(run_plugin, pytester: pytest.Pytester) -> None:
    result = run_plugin(CASES / "judged_calls", args=(
        "--dcuopt-examples=2", "-k", "correctness and baseline", "--dcuopt-run-seed=12345"))
    result.assert_outcomes(passed=1)
    _, state = branches_of(pytester, "judged_calls", "cpu")
    assert state["options"]["run_seed"] == 12345
    bad = pytester.runpytest_subprocess("--dcuopt-run-seed=-3", "-p", "no:cacheprovider")
    assert bad.ret != 0
    bad.stderr.fnmatch_lines(["*'-3' is not a run seed*"])


def test_cases_with_the_same_dims_are_judged_on_their_own_inputs(
        run_plugin, pytester: pytest.Pytester, tmp_path: Any) -> None:
    """Two cases timed in one run at equal dims with different parameter names: each timed request's checked call
    on new inputs gets its own case's inputs (the pytest process keeps every draw it makes)."""
    renamed = tmp_path / "judged_renamed"
    renamed.mkdir()
    for name in ("ref.py", "dims.json", "kernel.cpp"):
        text = (CASES / "judged_calls" / name).read_text()
        (renamed / name).write_text(text.replace("x[i]", "u[i]").replace("float* x", "float* u")
                                    .replace('"x"', '"u"').replace("(x, y, N)", "(u, y, N)")
                                    .replace("value * x", "value * u").replace("zeros_like(x)", "zeros_like(u)"))
    result = run_plugin(CASES / "judged_calls", renamed, args=("--dcuopt-examples=2", "-k", "baseline"))
    for case in ("judged_calls", "judged_renamed"):
        branch = branches_of(pytester, case, "cpu")[0]["branches"]["baseline"]
        assert branch["correct"] is True and branch["error"] is None, (case, reason(branch))
    result.assert_outcomes(passed=4)
