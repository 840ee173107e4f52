"""close-iter's check of methods.json against open-iter's budget.json and the run's history (no harness run)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_dcuopt.cli import buckets as rules
from pytest_dcuopt.cli.close_iter import checked_methods
from pytest_dcuopt.cli.layout import LoopError, RunLayout
from pytest_dcuopt.toolchains import toolchain_class
from tests.unit.cli.test_methods_cli import COALESCE, UNROLL


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


# ----- the state rules on fixed inputs (rules.classify, rules.champion_isa) ------------------------------
DECLARED = [{"id": i, "name": i, "axis": i.split(".")[0]} for i in
            ("memory.vectorized_global_access", "latency.ilp_unroll", "compute.mmac_tensor_core",
             "memory.lds_tiling")]
HELPS = {"outcome": "helps", "slowdown_when_removed": 2.0, "slowdown_interval": [1.8, 2.2]}
NONE_SEEN = {"outcome": "no measurable effect", "slowdown_when_removed": 1.0, "slowdown_interval": [0.9, 1.1]}


def isa_report(champion: str, family: str, outcomes: dict[str, str]) -> dict[str, object]:
    checks = [{"kind": "method", "subject": m, "outcome": o, "detail": f"{m} {o}"} for m, o in outcomes.items()]
    return {"checks": [{"branch": "b9", "verdicts": []},
                       {"branch": champion, "verdicts": [{"family": family, "checks": checks}]}]}


def buckets(outcome: dict[str, object]) -> dict[str, str]:
    return {m["id"]: m["bucket"] for m in rules.classify(DECLARED, outcome)}


def test_state_rules_combine_the_ablation_with_the_champions_per_method_isa() -> None:
    isa = rules.champion_isa(isa_report("b1", "sass", {
        "memory.vectorized_global_access": "pass",  # LDG.E.128 found
        "latency.ilp_unroll": "inconclusive",      # no instruction of its own: timing decides
        "compute.mmac_tensor_core": "fail",        # built, but no tensor-core instruction in the dump
        "memory.lds_tiling": "inconclusive",       # has a SASS signature, but the dump was incomplete
    }), "b1")
    assert {m: c["isa"] for m, c in isa.items()} == {
        "memory.vectorized_global_access": "present", "latency.ilp_unroll": "no signature",
        "compute.mmac_tensor_core": "missing", "memory.lds_tiling": "unknown"}
    ablated = {m["id"]: HELPS for m in DECLARED}
    found = buckets({"promoted": True, "isa": isa, "ablation": {"methods": ablated}})
    assert found == {"memory.vectorized_global_access": "effective", "latency.ilp_unroll": "effective",
                     "compute.mmac_tensor_core": "implementation_failed", "memory.lds_tiling": "inconclusive"}
    quiet = buckets({"promoted": True, "isa": isa, "ablation": {"methods": {m["id"]: NONE_SEEN for m in DECLARED}}})
    assert quiet["memory.vectorized_global_access"] == "ineffective"  # ISA present, removing it changes nothing
    assert quiet["compute.mmac_tensor_core"] == "implementation_failed"  # whatever the timing says


def test_without_an_isa_result_no_method_is_effective() -> None:
    found = buckets({"promoted": True, "isa": {}, "ablation": {"methods": {m["id"]: HELPS for m in DECLARED}}})
    assert set(found.values()) == {"inconclusive"}
    (first, *_) = rules.classify(DECLARED, {"promoted": True, "isa": {}, "ablation": {}})
    assert first["note"].startswith("ISA evidence not gathered: no ISA check result for the champion")


def test_without_a_promotion_a_method_missing_from_every_checked_branch_failed_its_implementation() -> None:
    report = {"checks": [
        {"branch": b, "verdicts": [{"family": "amdgcn", "checks": [
            {"kind": "method", "subject": "compute.mmac_tensor_core", "outcome": "fail", "detail": "no v_mfma"},
            {"kind": "method", "subject": "memory.vectorized_global_access", "outcome": o, "detail": o}]}]}
        for b, o in (("b1", "fail"), ("b2", "pass"))]}
    isa = rules.branches_isa(report, ["b1", "b2"], [m["id"] for m in DECLARED])
    assert isa["compute.mmac_tensor_core"]["isa"] == "missing" and isa["compute.mmac_tensor_core"]["branches"] == [
        "b1", "b2"]
    assert isa["memory.vectorized_global_access"]["isa"] == "present"  # b2 has it: implemented, and no faster
    found = rules.classify(DECLARED, {"promoted": False, "any_correct_branch": True, "isa": isa})
    by_id = {m["id"]: m for m in found}
    assert by_id["compute.mmac_tensor_core"]["bucket"] == "implementation_failed"
    assert by_id["compute.mmac_tensor_core"]["isa"]["isa"] == "missing"  # never `isa: null`
    assert by_id["memory.vectorized_global_access"]["bucket"] == "ineffective"
    assert by_id["latency.ilp_unroll"]["bucket"] == "ineffective" and by_id["latency.ilp_unroll"]["isa"]["isa"] == (
        "unknown")


def test_an_inconclusive_ablation_is_its_own_bucket_not_ineffective() -> None:
    isa = {m["id"]: {"isa": "present", "family": "sass", "detail": ""} for m in DECLARED}
    wide = {"outcome": "inconclusive", "slowdown_when_removed": 1.7, "slowdown_interval": [0.97, 2.96],
            "note": "after 12 paired rounds the interval [0.97, 2.96] holds both an effect and none"}
    found = rules.classify(DECLARED, {"promoted": True, "isa": isa,
                                           "ablation": {"methods": {m["id"]: wide for m in DECLARED}}})
    assert {m["bucket"] for m in found} == {"inconclusive"}
    assert found[0]["note"].startswith("removing it: after 12 paired rounds") and found[0]["slowdown_interval"] == [
        0.97, 2.96]


def test_a_method_not_ablated_is_inconclusive_even_with_its_isa_present() -> None:
    isa = {m["id"]: {"isa": "present", "family": "sass", "detail": ""} for m in DECLARED}
    found = rules.classify(DECLARED, {"promoted": True, "isa": isa, "ablation": {"status": "not run",
                                                                                    "reason": "no flags"}})
    assert {m["bucket"] for m in found} == {"inconclusive"} and found[0]["note"] == "not ablated: no flags"


def test_without_a_check_result_a_method_with_no_signature_in_the_family_needs_none() -> None:
    isa = rules.champion_isa(None, "b1", ["latency.ilp_unroll", "memory.vectorized_global_access"],
                                  toolchain_class("cpu"))
    assert isa["latency.ilp_unroll"]["isa"] == "no signature" and isa["latency.ilp_unroll"]["family"] == "x86"
    assert "memory.vectorized_global_access" not in isa  # x86 has a signature for it: no check, no evidence
    found = buckets({"promoted": True, "isa": isa, "ablation": {"methods": {m["id"]: HELPS for m in DECLARED}}})
    assert found["latency.ilp_unroll"] == "effective" and found["memory.vectorized_global_access"] == "inconclusive"
