"""methods.json of an iteration: the loop's JSON schema (package data beside this module), the loop's own rules,
then the method registry's validator (`profile.methods.validate_iteration`) against the iteration's budget.

Every problem names its rule in brackets:

    [schema]         methods.schema.json (the loop's fields: name, description, ablation_flag ...)
    [iter]           `iter` is the iteration's own number
    [ablation_flag]  each flag removes one method
    [duplicate] [unknown_id] [axis] [budget] [arch] [history] [priority] [conflicts] [coupled]
                     the registry's rules (pytest_dcuopt/profile/methods.py; docs/profiling.md), checked against
                     `iterv<i>/budget.json` (budget, bound, arch from open-iter's profile) and the methods that
                     earlier iterations tried, with the bound they had then

The registry's schema knows the method fields the registry needs; the loop's own keys (`$comment`,
`ablation_flag`) are removed before it sees the document (LOOP_ONLY_KEYS). When open-iter could not derive a
budget (no profile, or a profile with no utilization), the budget rule is not applied and the result says so;
every other rule still is.
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from ..profile.methods import Tried, load_registry, validate_iteration

SCHEMA_NAME = "methods.schema.json"
LOOP_ONLY_KEYS = ("$comment",)  # top-level keys the registry's schema does not know
LOOP_ONLY_METHOD_KEYS = ("ablation_flag",)  # per-method keys likewise


@dataclass(frozen=True)
class Selection:
    """What an iteration's methods are checked against: its budget.json and the run's history."""

    index: int
    budget: Mapping[str, int] | None  # None: open-iter derived no budget (`no_budget_reason` says why)
    bound: str = "unknown"
    arch: str | None = None
    stop: str | None = None
    no_budget_reason: str = ""
    history: Sequence[Tried] = ()


@dataclass(frozen=True)
class Validation:
    problems: list[str] = field(default_factory=list)  # the document is rejected when there is any
    notes: list[str] = field(default_factory=list)  # rules that could not be applied, and why


def schema() -> dict[str, Any]:
    return dict(json.loads((resources.files(__package__ or "pytest_dcuopt.cli") / SCHEMA_NAME).read_text()))


def template(index: int, budget_line: str) -> dict[str, Any]:
    """The methods.json open-iter writes; `budget_line` says how many methods per axis (from budget.json)."""
    return {"$comment": f"{budget_line}. Fill `methods` (docs/loop.md): every branch of this iteration implements "
                        "the same methods, ids, axes and priorities from the method registry "
                        "(pytest_dcuopt/isa/data/methods.json), higher-priority methods of the axis selected or "
                        "listed in skipped_higher. Give each an `ablation_flag` (e.g. -DDCUOPT_NO_UNROLL) that the "
                        "kernel honours with #ifndef, so close-iter can measure what it is worth.",
            "iter": index, "methods": []}


def validate(path: Path, selection: Selection) -> Validation:
    """Every problem of `path`, one sentence each with its rule; no problems when it is a valid selection."""
    import jsonschema

    if not path.is_file():
        return Validation([f"[schema] {path} is missing; `dcuopt open-iter` writes a template to fill."])
    try:
        document = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        return Validation([f"[schema] {path} is not valid JSON: {exc}."])
    validator = jsonschema.Draft7Validator(schema())
    problems = [f"[schema] {path}: {'/'.join(str(p) for p in error.absolute_path) or '(top)'}: {error.message}"
                for error in sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))]
    if problems:
        return Validation(problems)
    problems = loop_rule_problems(path, document, selection.index)
    registry, notes = registry_problems(path, document, selection)
    return Validation(problems + registry, notes)


def loop_rule_problems(path: Path, document: Mapping[str, Any], index: int) -> list[str]:
    problems = []
    if document["iter"] != index:
        problems.append(f"[iter] {path}: iter is {document['iter']}, but this is iteration {index}; set \"iter\": "
                        f"{index}.")
    flags = [m["ablation_flag"] for m in document["methods"] if "ablation_flag" in m]
    problems += [f"[ablation_flag] {path}: ablation_flag {f!r} is given to {flags.count(f)} methods; each flag "
                 "removes one method." for f in sorted(set(flags)) if flags.count(f) > 1]
    return problems


def registry_problems(path: Path, document: Mapping[str, Any], selection: Selection) -> tuple[list[str], list[str]]:
    """The registry validator's rejections (problems) and the rules it could not apply (notes)."""
    rejections = validate_iteration(registry_view(document), selection.budget or {}, selection.arch, selection.bound,
                                    selection.history)
    notes = []
    if selection.budget is None:
        rejections = [r for r in rejections if r.rule != "budget"]
        notes.append(f"[budget] not applied: open-iter derived no budget for iteration {selection.index} "
                     f"({selection.no_budget_reason or 'no reason recorded'})")
    problems = [f"{path}: {rejection}" for rejection in rejections]
    if selection.stop and any(r.rule == "budget" for r in rejections):
        problems.append(f"[budget] {path}: the roofline of the current best says '{selection.stop}': the budget is "
                        "0 on every axis; run `dcuopt finalize` instead of selecting methods.")
    return problems, notes


def registry_view(document: Mapping[str, Any]) -> dict[str, Any]:
    """The document without the loop's own keys, which the registry's schema does not know."""
    view = {k: v for k, v in document.items() if k not in LOOP_ONLY_KEYS}
    view["methods"] = [{k: v for k, v in method.items() if k not in LOOP_ONLY_METHOD_KEYS}
                       for method in document.get("methods", [])]
    return view


def history_of(state: Mapping[str, Any], index: int) -> list[Tried]:
    """The methods of other closed iterations with the bound the kernel had then (the iteration's budget.json
    bound, recorded on each method when it was closed)."""
    tried = []
    for method in state.get("selected_methods", []):
        if method.get("iter") == index:
            continue
        iteration = state.get("iterations", {}).get(str(method.get("iter")), {})
        bound = method.get("bound") or (iteration.get("profile") or {}).get("bound") or "unknown"
        tried.append(Tried(method["id"], bound, int(method.get("iter") or 0)))
    return tried


def propose(selection: Selection, registry: Mapping[str, Any] | None = None,
            without_budget: Mapping[str, int] | None = None, not_triggered: Sequence[str] = ()) -> dict[str, Any]:
    """A methods.json the validator accepts for `selection`: per axis, the budgeted number of methods by the
    registry's priority scan, each passed-over higher-priority method listed in `skipped_higher` with the registry's
    reason (the arch lacks it, it was tried at this bound, it conflicts with or needs a method outside the
    selection). A starting point that a person or script edits (names, descriptions, flags). Without a budget
    (the budget rule is not applied then): `without_budget`, else one method on the bound's axis (latency when
    the bound is unknown). `not_triggered`: methods the caller judged the profile does not call for (passed over
    with the reason `no_trigger`)."""
    registry = registry or load_registry()
    methods = registry["methods"]
    tried = {t.id for t in selection.history if t.bound == selection.bound}
    applied = {t.id for t in selection.history}
    budget = dict(selection.budget) if selection.budget is not None else dict(without_budget or {
        selection.bound if selection.bound in ("compute", "memory", "latency") else "latency": 1})
    chosen: list[dict[str, Any]] = []
    for axis in ("compute", "memory", "latency"):
        passed: list[dict[str, str]] = []
        for method_id, method in sorted(methods.items(), key=lambda kv: kv[1]["priority"]):
            if method["axis"] != axis or sum(1 for m in chosen if m["axis"] == axis) >= int(budget.get(axis, 0)):
                continue
            reason = ("no_trigger" if method_id in not_triggered else
                      _skip_reason(method_id, method, selection, tried, applied, [m["id"] for m in chosen], registry))
            if reason:
                passed.append({"id": method_id, "reason": reason})
                continue
            chosen.append({"id": method_id, "name": method_id.split(".", 1)[1].replace("_", " "), "axis": axis,
                           "priority": method["priority"], "description": method["description"],
                           "skipped_higher": list(passed)})
    return {"iter": selection.index, "methods": chosen}


def _skip_reason(method_id: str, method: Mapping[str, Any], selection: Selection, tried: set[str], applied: set[str],
                 chosen: Sequence[str], registry: Mapping[str, Any]) -> str | None:
    if _arch_problem(method_id, selection, registry):
        return "feature_unavailable"
    if method_id in tried:
        return "tried_same_bound"
    if any(other in chosen for other in method["conflicts"]) or any(
            method_id in registry["methods"][other]["conflicts"] for other in chosen):
        return "conflicts_with_selected"
    if any(partner not in applied for partner in method["coupled"]):
        return "skip_condition"
    return None


def _probe(method_id: str, method: Mapping[str, Any]) -> dict[str, Any]:
    return {"id": method_id, "name": method_id, "axis": method["axis"], "priority": method["priority"],
            "description": "probe"}


def _arch_problem(method_id: str, selection: Selection, registry: Mapping[str, Any]) -> bool:
    method = registry["methods"][method_id]
    found = validate_iteration({"iter": selection.index, "methods": [_probe(method_id, method)]}, {},
                               selection.arch, selection.bound, (), registry)
    return any(r.rule == "arch" for r in found)
