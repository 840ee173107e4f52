"""methods.json validation (pytest_dcuopt/cli/methods.py and its packaged schema)."""
from __future__ import annotations

import json
from pathlib import Path

from pytest_dcuopt.cli import methods

UNROLL = {"id": "latency.ilp_unroll", "name": "Unroll", "axis": "latency", "description": "eight accumulators",
          "ablation_flag": "-DDCUOPT_NO_UNROLL"}


def write(tmp_path: Path, document: object) -> Path:
    path = tmp_path / "methods.json"
    path.write_text(json.dumps(document))
    return path


def test_a_complete_methods_file_is_valid(tmp_path: Path) -> None:
    assert methods.validate(write(tmp_path, {"iter": 2, "methods": [UNROLL]}), 2, []) == []


def test_the_template_is_rejected_until_methods_are_filled_in(tmp_path: Path) -> None:
    problems = methods.validate(write(tmp_path, methods.template(1)), 1, [])
    assert len(problems) == 1 and "methods: [] should be non-empty" in problems[0]


def test_schema_errors_name_the_field(tmp_path: Path) -> None:
    bad = {**UNROLL, "axis": "speed", "ablation_flag": "DCUOPT_NO_UNROLL"}
    problems = methods.validate(write(tmp_path, {"iter": 1, "methods": [bad]}), 1, [])
    assert any("methods/0/axis" in p and "'speed'" in p for p in problems), problems
    assert any("methods/0/ablation_flag" in p for p in problems), problems


def test_loop_rules_wrong_iteration_duplicates_and_retries(tmp_path: Path) -> None:
    twice = {"iter": 3, "methods": [UNROLL, UNROLL]}
    problems = methods.validate(write(tmp_path, twice), 2, [{"id": "latency.ilp_unroll", "iter": 1}])
    assert any("iter is 3, but this is iteration 2" in p for p in problems)
    assert any("listed 2 times" in p for p in problems)
    assert any("given to 2 methods" in p for p in problems)
    assert any("already tried in iteration 1" in p and "retry_reason" in p for p in problems)


def test_a_retry_reason_makes_an_earlier_method_selectable_again(tmp_path: Path) -> None:
    retried = {**UNROLL, "retry_reason": "the bottleneck moved from memory to latency"}
    path = write(tmp_path, {"iter": 2, "methods": [retried]})
    assert methods.validate(path, 2, [{"id": "latency.ilp_unroll", "iter": 1}]) == []


def test_missing_and_broken_files_are_problems_not_exceptions(tmp_path: Path) -> None:
    assert "is missing" in methods.validate(tmp_path / "methods.json", 1, [])[0]
    (tmp_path / "methods.json").write_text("{")
    assert "is not valid JSON" in methods.validate(tmp_path / "methods.json", 1, [])[0]


def test_registry_notes_name_methods_without_isa_signatures() -> None:
    notes = methods.registry_notes({"methods": [UNROLL, {**UNROLL, "id": "noop.placebo"}]})
    assert notes == ["method 'noop.placebo' is not in the ISA signature registry: its ISA cannot be checked"]
