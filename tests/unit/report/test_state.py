"""The champion, decided from fixed samples: never without a correct baseline timed in the same run, and never when
a branch's own-run medians and its interleaved A/B rounds disagree by more than DISAGREE_FACTOR."""
from __future__ import annotations

from pytest_dcuopt.report.state import (
    DISAGREE_FACTOR,
    NO_BASELINE_NOTE,
    BranchRecord,
    build_state,
    rank_branches,
    validate_state,
)
from pytest_dcuopt.report.summary import render_summary, terminal_lines
from pytest_dcuopt.timing.policy import summarize

HEADER = {"tool": {"name": "pytest_dcuopt", "version": "0"}, "created_at": "t0", "finished_at": "t1",
          "run_dir": "/r", "exit_status": 0, "machine": {"cpu": "x", "host": "h"}, "options": {"timing": {}}}


def timed(branch: str, samples: list[float], correct: bool | None = True) -> BranchRecord:
    record = BranchRecord("case", "cpu", branch, f"{branch}.cpp", correct=correct, examples=3)
    record.timing = {**summarize(samples).to_json(), "mode": "cold", "timer": "host"}
    return record


def interleaved(record: BranchRecord, baseline_ms: float, branch_ms: float) -> BranchRecord:
    """A/B rounds whose intervals are tight around the two medians."""
    assert record.timing is not None
    record.timing["interleaved"] = {
        "speedup": baseline_ms / branch_ms, "median_ms": branch_ms, "baseline_median_ms": baseline_ms,
        "ci95_ms": [branch_ms * 0.98, branch_ms * 1.02], "baseline_ci95_ms": [baseline_ms * 0.98, baseline_ms * 1.02]}
    return record


def loaded_run() -> list[BranchRecord]:
    """The baseline's own run caught the load (3 samples near 6.4 ms); the A/B rounds say 1.52x."""
    return [timed("baseline", [6.3, 6.4, 6.5]), interleaved(timed("fast", [0.99, 1.0, 1.01] * 4), 1.52, 1.0)]


def test_own_run_and_a_b_figures_that_disagree_crown_nothing_and_say_so() -> None:
    ranking = rank_branches(loaded_run())
    assert ranking["champion"] is None
    assert ranking["branches"]["fast"]["measurements_disagree"] == "own-run medians give 6.40x, the A/B rounds 1.52x"
    assert "the own-run and A/B measurements disagree (fast: own-run medians give 6.40x" in ranking["champion_note"]

    state = build_state(loaded_run(), HEADER)
    validate_state(state)
    result = state["cases"]["case"]["toolchains"]["cpu"]
    assert result["champion"] is None and result["branches"]["fast"]["measurements_disagree"]
    lines = terminal_lines(state)
    assert lines[0].startswith("case [cpu]  champion: none (the own-run and A/B measurements disagree")
    assert any(line.startswith("  | fast ") and "| disagree " in line for line in lines), lines
    assert "Champion: **none** (the own-run and A/B measurements disagree" in render_summary(state)


def test_ordinary_drift_between_the_two_figures_still_crowns() -> None:
    """README's dram row on the 2-core VM: 2.08x own-run against 1.16x A/B (1.8 apart) is drift, not disagreement."""
    assert 2.08 / 1.16 < DISAGREE_FACTOR
    records = [timed("baseline", [2.08] * 10), interleaved(timed("openmp", [1.0] * 10), 2.2, 1.9)]
    ranking = rank_branches(records)
    assert ranking["champion"] == "openmp" and "measurements_disagree" not in ranking["branches"]["openmp"]
    assert "champion_note" not in ranking


def test_no_branch_is_champion_without_a_baseline_timed_in_the_same_run() -> None:
    deselected = rank_branches([timed("fast", [0.5] * 10), timed("slow", [0.9] * 10)])
    assert deselected["champion"] is None and deselected["champion_note"] == NO_BASELINE_NOTE
    wrong = rank_branches([timed("baseline", [1.0] * 10, correct=False), timed("fast", [0.5] * 10)])
    assert wrong["champion"] is None and wrong["champion_speedup"] is None and wrong["baseline_ms"] is None
    state = build_state([timed("fast", [0.5] * 10)], HEADER)
    validate_state(state)
    assert terminal_lines(state)[0] == f"case [cpu]  champion: none ({NO_BASELINE_NOTE})"


def test_a_branch_that_may_not_rank_never_beats_the_baseline() -> None:
    """A timing kept from before the branch was refused (its clock was refuted at another size) says nothing."""
    refused = interleaved(timed("forged", [0.1] * 10, correct=False), 1.0, 0.1)
    ranking = rank_branches([timed("baseline", [1.0] * 10), refused])
    assert ranking["branches"]["forged"]["beats_baseline"] is False
    assert ranking["champion"] == "baseline"
