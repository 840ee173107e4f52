from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from pytest_dcuopt.files import write_atomic
from pytest_dcuopt.report.state import (
    BranchRecord,
    build_state,
    rank_branches,
    validate_state,
)
from pytest_dcuopt.report.summary import render_summary, terminal_lines
from pytest_dcuopt.timing.policy import summarize

HEADER = {"tool": {"name": "pytest_dcuopt", "version": "0"}, "created_at": "t0", "finished_at": "t1",
          "run_dir": "/r", "exit_status": 0, "machine": {"cpu": "x", "host": "h"}, "options": {"timing": {}}}


def timed(branch: str, samples: list[float], correct: bool = True) -> BranchRecord:
    record = BranchRecord("case", "cpu", branch, f"{branch}.cpp", correct=correct, examples=3)
    record.timing = {**summarize(samples).to_json(), "mode": "cold", "timer": "host"}
    record.build = {"toolchain": "cpu", "command": "g++ x"}
    return record


def test_champion_must_beat_the_baseline_beyond_noise() -> None:
    base = timed("baseline", [1.0, 1.02, 0.98, 1.01, 0.99] * 4)
    noisy_tie = timed("tie", [0.97, 1.03, 0.99, 1.0, 0.98] * 4)
    ranking = rank_branches([base, noisy_tie])
    assert ranking["champion"] == "baseline"
    assert ranking["branches"]["tie"]["beats_baseline"] is False


def test_fastest_correct_branch_wins_and_wrong_ones_never_do() -> None:
    records = [timed("baseline", [1.0] * 20), timed("fast", [0.5] * 20), timed("faster_but_wrong", [0.1] * 20, False),
               timed("medium", [0.7] * 20)]
    ranking = rank_branches(records)
    assert ranking["champion"] == "fast" and ranking["champion_speedup"] == pytest.approx(2.0)
    assert ranking["branches"]["medium"]["speedup_vs_baseline"] == pytest.approx(1 / 0.7)


def test_without_a_correct_baseline_no_speedup_is_claimed() -> None:
    ranking = rank_branches([timed("baseline", [1.0] * 5, correct=False), timed("b1", [0.5] * 5),
                             timed("b2", [0.7] * 5)])
    assert ranking["champion"] is None and ranking["champion_speedup"] is None and ranking["baseline_ms"] is None
    assert rank_branches([timed("b1", [0.5] * 5, correct=False)])["champion"] is None


def test_state_is_schema_valid_and_rendered() -> None:
    failing = BranchRecord("case", "cpu", "broken", "broken.cpp", correct=False,
                           failure={"dims": {"N": 3}, "seed": 1, "message": "wrong at 2", "reproduce": "pytest x"})
    state = build_state([timed("baseline", [1.0] * 10), timed("fast", [0.5] * 10), failing], HEADER)
    validate_state(state)
    result = state["cases"]["case"]["toolchains"]["cpu"]
    assert result["champion"] == "fast" and result["branches"]["fast"]["champion"] is True
    summary = render_summary(state)
    assert "## case (cpu)" in summary and "| fast*" in summary
    assert "**broken** is incorrect. Minimal example: dims `{\"N\": 3}`, seed `1`." in summary
    assert "Reproduce: `pytest x`" in summary
    assert any(line.startswith("case [cpu]  champion: fast (2.00x)") for line in terminal_lines(state))


def test_schema_rejects_a_timing_without_median() -> None:
    state = build_state([timed("baseline", [1.0] * 5)], HEADER)
    del state["cases"]["case"]["toolchains"]["cpu"]["branches"]["baseline"]["timing"]["median_ms"]
    with pytest.raises(jsonschema.ValidationError, match="median_ms"):
        validate_state(state)


def test_records_merge_across_processes() -> None:
    controller = BranchRecord("c", "cpu", "b", "b.cpp", correct=False)
    worker = BranchRecord("c", "cpu", "b", "b.cpp", correct=True, examples=5, throughput={"gbps": 1.0})
    controller.merge(BranchRecord.from_json(json.loads(json.dumps(worker.to_json()))))
    assert controller.correct is False  # a failure seen anywhere stands
    assert controller.examples == 5 and controller.throughput == {"gbps": 1.0}


def test_atomic_write_leaves_no_temporary_files(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "state.json"
    write_atomic(target, "one")
    write_atomic(target, "two")
    assert target.read_text() == "two"
    assert [p.name for p in target.parent.iterdir()] == ["state.json"]
