"""close-iter's check of methods.json against open-iter's budget.json and the run's history (no harness run)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_dcuopt.cli.close_iter import checked_methods
from pytest_dcuopt.cli.layout import LoopError, RunLayout

from .test_cli_methods import COALESCE, UNROLL


def run_with(tmp_path: Path, budget: dict[str, int] | None, bound: str, document: dict[str, Any],
             reason: str = "") -> RunLayout:
    """A run directory whose iteration 2 has this budget.json (as open-iter writes it) and methods.json."""
    layout = RunLayout(tmp_path)
    folder = layout.iteration(2)
    folder.mkdir(parents=True)
    (folder / "budget.json").write_text(json.dumps(
        {"iter": 2, "verdict": "profiled", "bound": bound, "budget": budget, "arch": None, "stop": None,
         "total": sum(budget.values()) if budget else None, "basis": "test input", "reason": reason or None}))
    (folder / "methods.json").write_text(json.dumps(document))
    return layout


STATE = {"selected_methods": [{"id": "latency.ilp_unroll", "iter": 1, "bound": "latency"}],
         "iterations": {"1": {"profile": {"bound": "latency"}}, "2": {"profile": {"bound": "latency"}}}}


def test_methods_beyond_the_budget_are_rejected_naming_the_rule(tmp_path: Path) -> None:
    layout = run_with(tmp_path, {"compute": 0, "memory": 0, "latency": 1}, "memory",
                      {"iter": 2, "methods": [UNROLL, COALESCE]})
    with pytest.raises(LoopError, match=r"\[budget\] 1 memory method\(s\) selected, the axis budget is 0"):
        checked_methods(layout, STATE, 2)


def test_a_method_repeated_from_history_at_the_same_bound_is_rejected_naming_the_rule(tmp_path: Path) -> None:
    layout = run_with(tmp_path, {"compute": 0, "memory": 0, "latency": 1}, "latency",
                      {"iter": 2, "methods": [UNROLL]})
    with pytest.raises(LoopError, match=r"\[history\] latency.ilp_unroll was tried in iteration 1"):
        checked_methods(layout, STATE, 2)


def test_the_same_method_is_accepted_once_the_bound_changed(tmp_path: Path) -> None:
    layout = run_with(tmp_path, {"compute": 0, "memory": 0, "latency": 1}, "memory", {"iter": 2, "methods": [UNROLL]})
    document, notes = checked_methods(layout, STATE, 2)
    assert [m["id"] for m in document["methods"]] == ["latency.ilp_unroll"] and notes == []


def test_without_a_budget_every_other_rule_applies_and_the_gap_is_noted(tmp_path: Path) -> None:
    layout = run_with(tmp_path, None, "unknown", {"iter": 2, "methods": [COALESCE, UNROLL]}, "no roofline")
    document, notes = checked_methods(layout, STATE, 2)
    assert len(document["methods"]) == 2
    assert notes == ["[budget] not applied: open-iter derived no budget for iteration 2 (no roofline)"]


def test_a_missing_budget_json_sends_the_user_to_open_iter(tmp_path: Path) -> None:
    layout = run_with(tmp_path, None, "unknown", {"iter": 2, "methods": [COALESCE]})
    (layout.iteration(2) / "budget.json").unlink()
    with pytest.raises(LoopError, match=r"budget\.json is missing.*dcuopt open-iter"):
        checked_methods(layout, STATE, 2)
