"""The method registry (isa/data/methods.json) and the iteration methods.json validator: one test per rule."""
from __future__ import annotations

import copy
import importlib.util
import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from pytest_dcuopt.profile.methods import (
    Tried,
    arch_features,
    load_registry,
    validate_iteration,
    validate_registry,
)
from pytest_dcuopt.profile.metrics import CANONICAL

# The rules of validate_iteration, as its module's docstring lists them.
RULES = ("schema", "duplicate", "unknown_id", "axis", "budget", "arch", "history", "priority", "conflicts", "coupled")
CATALOG_TOOL = Path(__file__).parents[3] / "tools" / "optimization_catalog.py"


def catalog_markdown() -> str:
    spec = importlib.util.spec_from_file_location("optimization_catalog", CATALOG_TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text: str = module.catalog_markdown()
    return text

MEMORY_1 = {"id": "memory.coalesced_access", "axis": "memory", "priority": 1}
MEMORY_2 = {"id": "memory.vectorized_global_access", "axis": "memory", "priority": 2}
LATENCY_1 = {"id": "latency.waitcnt_pipeline", "axis": "latency", "priority": 1}
BUDGET = {"compute": 0, "memory": 2, "latency": 1}


def valid() -> dict[str, Any]:
    return {"iter": 2, "methods": [dict(MEMORY_1), dict(MEMORY_2), dict(LATENCY_1)]}


def rules(document: dict[str, Any], budget: dict[str, int] = BUDGET, arch: str = "gfx936", bound: str = "memory",
          history: tuple[Tried, ...] = ()) -> list[str]:
    return [r.rule for r in validate_iteration(document, budget, arch, bound, history)]


def test_the_shipped_registry_is_valid_and_holds_exactly_the_signature_ids() -> None:
    registry = load_registry()
    signatures = json.loads(resources.files("pytest_dcuopt.isa").joinpath("data/isa_signatures.json").read_text())
    assert set(registry["methods"]) == set(signatures["methods"])
    assert validate_registry(registry) == []


def test_registry_problems_are_named() -> None:
    registry = copy.deepcopy(load_registry())
    registry["methods"]["memory.lds_tiling"]["axis"] = "compute"
    registry["methods"]["memory.lds_tiling"]["indicators"][0]["metric"] = "tcc_magic"
    registry["methods"]["compute.brand_new"] = copy.deepcopy(registry["methods"]["compute.thread_coarsening"])
    registry["methods"]["compute.brand_new"]["priority"] = 40
    problems = "\n".join(validate_registry(registry))
    assert "memory.lds_tiling: axis compute but isa_signatures.json says memory" in problems
    assert "indicator metric 'tcc_magic' is not a normalized metric" in problems
    assert "compute.brand_new: not a method of isa_signatures.json (the one list of ids)" in problems
    del registry["methods"]["compute.brand_new"]["description"]
    assert validate_registry(registry)[0].startswith("schema: methods/compute.brand_new")


def test_a_valid_selection_passes() -> None:
    assert validate_iteration(valid(), BUDGET, "gfx936", "memory") == []


def test_rule_schema() -> None:
    document = valid()
    del document["iter"]
    assert rules(document) == ["schema"]


def test_rule_duplicate() -> None:
    document = {"iter": 1, "methods": [dict(MEMORY_1), dict(MEMORY_1), dict(LATENCY_1)]}
    assert "duplicate" in rules(document)


def test_rule_unknown_id() -> None:
    document = valid()
    document["methods"][2] = {"id": "latency.magic", "axis": "latency", "priority": 1}
    assert rules(document) == ["unknown_id"]


def test_rule_axis_and_priority_follow_the_registry() -> None:
    document = valid()
    document["methods"][1]["priority"] = 1
    found = validate_iteration(document, BUDGET, "gfx936", "memory")
    assert [r.rule for r in found] == ["axis"] and "priority 1 differs from the registry's 2" in found[0].message


def test_rule_budget_counts_per_axis() -> None:
    found = validate_iteration(valid(), {"compute": 1, "memory": 1, "latency": 1}, "gfx936", "memory")
    assert {r.rule for r in found} == {"budget"}
    assert any("2 memory method(s) selected, the axis budget is 1" in r.message for r in found)


def test_rule_arch_features_not_gfx_numbers() -> None:
    document = {"iter": 1, "methods": [
        {"id": "compute.mmac_tensor_core", "axis": "compute", "priority": 1},
        {"id": "compute.mixed_precision_fp8_bf8", "axis": "compute", "priority": 2},
        {"id": "memory.ds_read_matrix_layout", "axis": "memory", "priority": 7,
         "skipped_higher": [{"id": f"memory.{m}", "reason": "no_trigger"} for m in
                            ("coalesced_access", "vectorized_global_access", "aligned_layout_transform", "lds_tiling",
                             "global_to_lds_async", "matrix_load_mls")]}]}
    budget = {"compute": 2, "memory": 1, "latency": 0}
    found = validate_iteration(document, budget, "gfx936", "compute")
    assert [r.rule for r in found] == ["arch"]
    assert "requires ['fp8_bf8'], which gfx936 does not have" in found[0].message
    assert validate_iteration(document, budget, "gfx938:sramecc+:xnack-", "compute") == []
    assert "fp8_bf8" not in (arch_features("gfx928") or set())


def test_rule_history_excludes_a_method_tried_under_the_same_bound_only() -> None:
    tried = (Tried("memory.coalesced_access", "memory", 1),)
    assert rules(valid(), history=tried) == ["history"]
    assert rules(valid(), history=(Tried("memory.coalesced_access", "latency", 1),)) == []  # the bound changed


def test_rule_priority_scan() -> None:
    document = {"iter": 1, "methods": [dict(MEMORY_2), {"id": "memory.lds_tiling", "axis": "memory", "priority": 4},
                                       dict(LATENCY_1)]}
    found = validate_iteration(document, BUDGET, "gfx936", "memory")
    assert {r.rule for r in found} == {"priority"}
    assert any("skips memory.coalesced_access (priority 1) without listing it" in r.message for r in found)
    document["methods"][0]["skipped_higher"] = [{"id": "memory.coalesced_access", "reason": "because"}]
    assert any("reason 'because'; known reasons" in r.message for r in validate_iteration(document, BUDGET, "gfx936",
                                                                                            "memory"))


def test_rule_conflicts() -> None:
    document = {"iter": 1, "methods": [
        {"id": "latency.persistent_scheduler", "axis": "latency", "priority": 5,
         "skipped_higher": [{"id": f"latency.{m}", "reason": "skip_condition"} for m in
                            ("waitcnt_pipeline", "reduce_barrier", "wavefront_shuffle_ds_bpermute", "ilp_unroll")]},
        {"id": "latency.split_k_streamk", "axis": "latency", "priority": 6,
         "skipped_higher": [{"id": f"latency.{m}", "reason": "skip_condition"} for m in
                            ("waitcnt_pipeline", "reduce_barrier", "wavefront_shuffle_ds_bpermute", "ilp_unroll")]}]}
    found = validate_iteration(document, {"compute": 0, "memory": 0, "latency": 2}, "gfx936", "latency")
    assert [r.rule for r in found] == ["conflicts"]


def test_rule_coupled() -> None:
    document = {"iter": 1, "methods": [{"id": "compute.mmac_tensor_core", "axis": "compute", "priority": 1}]}
    budget = {"compute": 1, "memory": 0, "latency": 0}
    found = validate_iteration(document, budget, "gfx936", "compute")
    assert [r.rule for r in found] == ["coupled"] and "memory.ds_read_matrix_layout" in found[0].message
    applied = (Tried("memory.ds_read_matrix_layout", "memory", 1),)
    assert validate_iteration(document, budget, "gfx936", "compute", applied) == []


@pytest.mark.parametrize("rule", RULES)
def test_every_rule_has_a_test(rule: str) -> None:
    assert f"def test_rule_{rule}" in Path(__file__).read_text()


def test_the_committed_catalog_is_the_one_generated_from_the_registry() -> None:
    committed = (Path(__file__).parents[3] / "references" / "optimization_catalog.md").read_text()
    assert committed == catalog_markdown(), ("references/optimization_catalog.md is stale: regenerate it with the "
                                             "command in its header")


def test_the_metrics_guide_names_only_normalized_metrics_and_every_indicator() -> None:
    guide = (Path(__file__).parents[3] / "references" / "dcu_metrics_guide.md").read_text()
    named = set(re.findall(r"^\| `([a-z0-9_]+)` \|", guide, re.MULTILINE))
    assert named and named <= set(CANONICAL), sorted(named - set(CANONICAL))
    indicators = {i["metric"] for m in load_registry()["methods"].values() for i in m["indicators"]}
    assert indicators <= named, sorted(indicators - named)
