"""methods.json validation (pytest_dcuopt/cli/methods.py, its packaged schema, then the method registry's rules)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_dcuopt.cli import methods
from pytest_dcuopt.profile.methods import Tried

SKIP_HIGHER_LATENCY = [{"id": i, "reason": "no_trigger"} for i in
                       ("latency.waitcnt_pipeline", "latency.reduce_barrier", "latency.wavefront_shuffle_ds_bpermute")]
UNROLL = {"id": "latency.ilp_unroll", "name": "Unroll", "axis": "latency", "priority": 4,
          "description": "eight accumulators", "ablation_flag": "-DDCUOPT_NO_UNROLL",
          "skipped_higher": SKIP_HIGHER_LATENCY}
COALESCE = {"id": "memory.coalesced_access", "name": "Coalesce", "axis": "memory", "priority": 1,
            "description": "unit-stride rows", "ablation_flag": "-DDCUOPT_NO_COALESCE"}
ONE_LATENCY = {"compute": 0, "memory": 0, "latency": 1}


def write(tmp_path: Path, document: object) -> Path:
    path = tmp_path / "methods.json"
    path.write_text(json.dumps(document))
    return path


def selection(index: int, budget: dict[str, int] | None = None, bound: str = "latency",
              history: tuple[Tried, ...] = ()) -> methods.Selection:
    return methods.Selection(index, budget, bound, None, None, "" if budget else "no roofline (test)", history)


def test_a_complete_methods_file_within_its_budget_is_valid(tmp_path: Path) -> None:
    result = methods.validate(write(tmp_path, {"iter": 2, "methods": [UNROLL]}), selection(2, ONE_LATENCY))
    assert result.problems == [] and result.notes == []


def test_the_template_carries_the_budget_and_is_rejected_until_methods_are_filled_in(tmp_path: Path) -> None:
    document = methods.template(1, "Budget: compute 0, memory 1, latency 2")
    assert document["$comment"].startswith("Budget: compute 0, memory 1, latency 2")
    problems = methods.validate(write(tmp_path, document), selection(1, ONE_LATENCY)).problems
    assert len(problems) == 1 and "[schema]" in problems[0] and "methods: [] should be non-empty" in problems[0]


def test_schema_errors_name_the_field(tmp_path: Path) -> None:
    bad = {**UNROLL, "axis": "speed", "ablation_flag": "DCUOPT_NO_UNROLL"}
    problems = methods.validate(write(tmp_path, {"iter": 1, "methods": [bad]}), selection(1, ONE_LATENCY)).problems
    assert any("methods/0/axis" in p and "'speed'" in p for p in problems), problems
    assert any("methods/0/ablation_flag" in p for p in problems), problems


def test_loop_rules_wrong_iteration_and_shared_flags_and_registry_duplicates(tmp_path: Path) -> None:
    twice = {"iter": 3, "methods": [UNROLL, UNROLL]}
    problems = methods.validate(write(tmp_path, twice), selection(2, {"compute": 0, "memory": 0, "latency": 2}))
    assert any(p.startswith("[iter]") and "iter is 3, but this is iteration 2" in p for p in problems.problems)
    assert any(p.startswith("[ablation_flag]") and "given to 2 methods" in p for p in problems.problems)
    assert any("[duplicate] latency.ilp_unroll is selected 2 times" in p for p in problems.problems)


def test_more_methods_than_the_budget_are_rejected_by_the_budget_rule(tmp_path: Path) -> None:
    path = write(tmp_path, {"iter": 1, "methods": [UNROLL, COALESCE]})
    problems = methods.validate(path, selection(1, ONE_LATENCY)).problems
    assert problems == [f"{path}: [budget] 1 memory method(s) selected, the axis budget is 0 (budget "
                        "{'compute': 0, 'memory': 0, 'latency': 1}, total 1)"]


def test_without_a_budget_the_budget_rule_is_not_applied_and_that_is_said(tmp_path: Path) -> None:
    result = methods.validate(write(tmp_path, {"iter": 1, "methods": [UNROLL, COALESCE]}), selection(1, None))
    assert result.problems == []
    assert result.notes == ["[budget] not applied: open-iter derived no budget for iteration 1 (no roofline (test))"]


def test_a_method_tried_at_the_same_bound_is_rejected_and_selectable_once_the_bound_changed(tmp_path: Path) -> None:
    path = write(tmp_path, {"iter": 2, "methods": [UNROLL]})
    same = methods.validate(path, selection(2, ONE_LATENCY, "latency", (Tried("latency.ilp_unroll", "latency", 1),)))
    assert len(same.problems) == 1 and "[history] latency.ilp_unroll was tried in iteration 1" in same.problems[0]
    moved = methods.validate(path, selection(2, ONE_LATENCY, "latency", (Tried("latency.ilp_unroll", "memory", 1),)))
    assert moved.problems == []


def test_the_loop_only_keys_are_removed_before_the_registry_sees_the_document() -> None:
    view = methods.registry_view({"$comment": "x", "iter": 1, "methods": [UNROLL]})
    assert "$comment" not in view and "ablation_flag" not in view["methods"][0]
    assert view["methods"][0]["id"] == "latency.ilp_unroll"


def test_an_id_outside_the_registry_is_rejected_with_its_rule(tmp_path: Path) -> None:
    placebo = {"id": "latency.placebo", "name": "Placebo", "axis": "latency", "priority": 9, "description": "zero"}
    problems = methods.validate(write(tmp_path, {"iter": 1, "methods": [placebo]}), selection(1, ONE_LATENCY)).problems
    assert any("[unknown_id] latency.placebo is not in the method registry" in p for p in problems), problems


def test_history_carries_the_bound_each_method_was_tried_at() -> None:
    state = {"selected_methods": [{"id": "latency.ilp_unroll", "iter": 1, "bound": "latency"},
                                  {"id": "memory.coalesced_access", "iter": 2, "bound": None},
                                  {"id": "latency.reduce_barrier", "iter": 3}],
             "iterations": {"2": {"profile": {"bound": "memory"}}}}
    assert methods.history_of(state, 3) == [Tried("latency.ilp_unroll", "latency", 1),
                                            Tried("memory.coalesced_access", "memory", 2)]


def test_missing_and_broken_files_are_problems_not_exceptions(tmp_path: Path) -> None:
    assert "is missing" in methods.validate(tmp_path / "methods.json", selection(1)).problems[0]
    (tmp_path / "methods.json").write_text("{")
    assert "is not valid JSON" in methods.validate(tmp_path / "methods.json", selection(1)).problems[0]


@pytest.mark.parametrize(("budget", "arch", "bound", "history"), [
    ({"compute": 1, "memory": 0, "latency": 2}, "sm_90", "latency", ()),
    ({"compute": 1, "memory": 2, "latency": 0}, "gfx936", "memory", ()),
    ({"compute": 2, "memory": 1, "latency": 0}, "x86_64", "compute", ()),
    ({"compute": 0, "memory": 1, "latency": 2}, "sm_90", "latency", (Tried("latency.waitcnt_pipeline", "latency", 1),
                                                                      Tried("memory.coalesced_access", "compute", 1))),
])
def test_a_proposed_selection_passes_every_rule(tmp_path: Path, budget: dict[str, int], arch: str, bound: str,
                                                history: tuple[Tried, ...]) -> None:
    chosen = methods.Selection(2, budget, bound, arch, None, "", history)
    document = methods.propose(chosen)
    assert methods.validate(write(tmp_path, document), chosen).problems == []
    assert [sum(m["axis"] == axis for m in document["methods"]) for axis in ("compute", "memory", "latency")] == [
        budget["compute"], budget["memory"], budget["latency"]]


def test_a_proposal_skips_what_the_arch_lacks_and_what_was_tried_at_this_bound_naming_the_reason() -> None:
    document = methods.propose(methods.Selection(2, {"compute": 1, "memory": 0, "latency": 1}, "latency", "x86_64",
                                                 history=(Tried("latency.waitcnt_pipeline", "latency", 1),)))
    compute, latency = document["methods"]
    assert compute["id"] == "compute.launch_config_wave64"
    assert {"id": "compute.mmac_tensor_core", "reason": "feature_unavailable"} in compute["skipped_higher"]
    assert latency["id"] == "latency.reduce_barrier"
    assert latency["skipped_higher"] == [{"id": "latency.waitcnt_pipeline", "reason": "tried_same_bound"}]


def test_without_a_budget_the_proposal_follows_the_given_split() -> None:
    document = methods.propose(selection(1), without_budget={"latency": 1, "memory": 1})
    assert [m["axis"] for m in document["methods"]] == ["memory", "latency"]
    assert [m["axis"] for m in methods.propose(selection(1, bound="unknown"))["methods"]] == ["latency"]
