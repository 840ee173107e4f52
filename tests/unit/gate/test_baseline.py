"""A gate's baseline must have run what the gated run runs: a partial baseline is refused (why, and which run is
needed), unless it made the gated run's own selection and ran to the end."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from pytest_dcuopt.gate.baseline import Baseline, parallelism_warning, xdist_workers
from pytest_dcuopt.gate.judge import Gate
from pytest_dcuopt.gate.rule import GateRule
from pytest_dcuopt.report.records import BranchRecord
from pytest_dcuopt.report.state import build_state, validate_state
from pytest_dcuopt.report.summary import render_summary


def write_state(directory: Path, scope: dict | None) -> Path:
    header = {"tool": {"name": "pytest_dcuopt", "version": "0"}, "created_at": "2024-01-01T00:00:00",
              "finished_at": "2024-01-01T00:01:00", "run_dir": str(directory), "machine": {}, "options": {}}
    if scope is not None:
        header["scope"] = scope
    state = build_state([BranchRecord("vs", "cpu", "baseline", "vs/kernel.cpp")], header)
    validate_state(state)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "state.json").write_text(json.dumps(state))
    return directory / "state.json"


COMPLETE = {"complete": True, "partial_because": [], "selection": []}
ONE_TEST = {"complete": False, "partial_because": ["test ids named on the command line (vs/ref.py::t[b])"],
            "selection": ["test ids named on the command line (vs/ref.py::t[b])"]}
ISA_ONLY = {"complete": False, "partial_because": ["-k 'test_isa'"], "selection": ["-k 'test_isa'"]}
STOPPED = {"complete": False, "partial_because": ["-k 'test_isa'", "stopped early (stopping after 1 failures)"],
           "selection": ["-k 'test_isa'"]}


@pytest.mark.parametrize("scope", [COMPLETE, None], ids=["complete", "written-before-scopes"])
def test_a_complete_baseline_is_taken(tmp_path: Path, scope: dict | None) -> None:
    assert Baseline.load(write_state(tmp_path, scope)).state["cases"]["vs"]


def test_a_partial_baseline_is_refused_saying_why_and_which_run_is_needed(tmp_path: Path) -> None:
    path = write_state(tmp_path, ONE_TEST)
    with pytest.raises(pytest.UsageError) as refused:
        Baseline.load(path)
    message = str(refused.value)
    assert f"{path} is a partial run (test ids named on the command line (vs/ref.py::t[b]))" in message
    assert "would pass this gate as NEW" in message and "complete run of the cases (vs)" in message


def test_a_baseline_with_the_gated_run_s_own_selection_is_taken(tmp_path: Path) -> None:
    path = write_state(tmp_path, ISA_ONLY)
    assert Baseline.load(path, ["-k 'test_isa'"]).path == path
    with pytest.raises(pytest.UsageError, match="is a partial run"):
        Baseline.load(path, ["-k 'test_benchmark'"])


def test_a_baseline_cut_short_is_refused_even_with_the_same_selection(tmp_path: Path) -> None:
    with pytest.raises(pytest.UsageError, match=r"stopped early \(stopping after 1 failures\)"):
        Baseline.load(write_state(tmp_path, STOPPED), ["-k 'test_isa'"])


@pytest.mark.parametrize(("args", "reason"), [
    (["-k", "test_isa"], "-k 'test_isa'"),
    (["-m", "slow"], "-m 'slow'"),
    (["--lf"], "--lf (the last failures only)"),
    (["--dcuopt-sizes=l2"], "--dcuopt-sizes (some benchmark sizes)"),
    (["vs/ref.py::test_correctness_cpu"], "test ids named on the command line (vs/ref.py::test_correctness_cpu)"),
])
def test_a_run_s_selection_is_named(pytester: pytest.Pytester, args: list[str], reason: str) -> None:
    from pytest_dcuopt.selection import partial_because, run_selection

    config = pytester.parseconfig(*args)
    assert run_selection(config) == [reason]
    assert partial_because(config, 0, None, None) == [reason]
    stopped = partial_because(config, 0, "stopping after 1 failures", None)
    assert stopped == [reason, "stopped early (stopping after 1 failures)"]


def test_a_run_with_no_selection_is_complete(pytester: pytest.Pytester) -> None:
    from pytest_dcuopt.selection import partial_because

    assert partial_because(pytester.parseconfig("vs"), 0, None, None) == []
    assert partial_because(pytester.parseconfig("vs"), 3, None, None) == ["3 tests deselected"]
    collect_only = pytester.parseconfig("vs", "--collect-only")
    assert partial_because(collect_only, 0, None, None) == ["--collect-only (nothing ran)"]


def test_a_baseline_of_schema_1_keyed_by_folder_name_matches_this_run_s_relative_keys(tmp_path: Path) -> None:
    """schema_version 1 keyed cases by their folder's name; this run keys them relative to the rootdir."""
    from pytest_dcuopt.gate.judge import Gate
    from pytest_dcuopt.gate.rule import GateRule

    path = write_state(tmp_path / "old", COMPLETE)
    old = json.loads(path.read_text())
    old["schema_version"] = 1
    path.write_text(json.dumps(old))
    baseline = Baseline.load(path)
    assert baseline.branch("kernels/vs", "cpu", "baseline") is not None
    now = build_state([BranchRecord("kernels/vs", "cpu", "baseline", "kernels/vs/kernel.cpp")],
                      {"tool": {}, "created_at": "", "finished_at": "", "run_dir": "", "machine": {}, "options": {}})
    Gate(baseline, GateRule()).attach(now, [])
    assert now["gate"]["missing"] == []
    assert now["cases"]["kernels/vs"]["toolchains"]["cpu"]["branches"]["baseline"]["gate"]["before"] is not None


def test_a_baseline_of_schema_2_matches_cases_by_their_relative_key_only(tmp_path: Path) -> None:
    baseline = Baseline.load(write_state(tmp_path, COMPLETE))
    assert baseline.state["schema_version"] == 2
    assert baseline.branch("vs", "cpu", "baseline") is not None
    assert baseline.branch("other/vs", "cpu", "baseline") is None


# ----- how many xdist workers a run had, and a baseline that had another number ---------------------------------------
@pytest.mark.parametrize(("option", "workers"), [
    ({}, 0),  # xdist not installed or disabled (-p no:xdist)
    ({"dist": "no", "tx": []}, 0),  # -n 0
    ({"dist": "load", "tx": ["popen", "popen"]}, 2),  # -n 2, as xdist's controller has rewritten it
    ({"dist": "loadgroup", "tx": ["2*popen", "socket=localhost:8888"]}, 3),  # --tx specs
], ids=["no xdist", "-n 0", "-n 2", "--tx specs"])
def test_the_xdist_worker_count_comes_from_the_controllers_options(option: dict, workers: int) -> None:
    config = SimpleNamespace(option=SimpleNamespace(**option))
    assert xdist_workers(config) == workers  # type: ignore[arg-type]


def test_a_baseline_says_how_many_workers_it_ran_with(tmp_path: Path) -> None:
    assert Baseline.load(write_state(tmp_path / "two", {**COMPLETE, "workers": 2})).workers == 2
    assert Baseline.load(write_state(tmp_path / "old", COMPLETE)).workers is None  # written before it was recorded


def test_another_number_of_workers_is_warned_about_naming_both() -> None:
    warning = parallelism_warning(2, 0)
    assert warning is not None and warning.startswith(
        "the baseline ran with 2 xdist workers (-n 2), this run with no xdist workers (-n 0):")
    assert "gate runs made the same way" in warning
    assert parallelism_warning(2, 2) is None and parallelism_warning(0, 0) is None
    assert parallelism_warning(None, 2) is None and parallelism_warning(2, None) is None


def test_the_gate_records_the_warning_and_summary_md_shows_it(tmp_path: Path) -> None:
    baseline = Baseline.load(write_state(tmp_path / "parallel", {**COMPLETE, "workers": 2}))
    gate = Gate(baseline, GateRule())
    header = {"tool": {"name": "pytest_dcuopt", "version": "0"}, "created_at": "2024-01-02T00:00:00",
              "finished_at": "2024-01-02T00:01:00", "run_dir": str(tmp_path / "now"), "machine": {}, "options": {},
              "scope": {**COMPLETE, "workers": 0}}
    state = build_state([BranchRecord("vs", "cpu", "baseline", "vs/kernel.cpp")], header)
    gate.attach(state, [])
    validate_state(state)
    assert state["gate"]["parallelism"] == {"baseline_workers": 2, "workers": 0,
                                            "warning": parallelism_warning(2, 0)}
    assert f"- **Warning:** {parallelism_warning(2, 0)}" in render_summary(state)
    same = build_state([BranchRecord("vs", "cpu", "baseline", "vs/kernel.cpp")],
                       {**header, "scope": {**COMPLETE, "workers": 2}})
    gate.attach(same, [])
    assert "parallelism" not in same["gate"]
