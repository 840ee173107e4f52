"""methods.json of an iteration: the loop's JSON schema (package data beside this module), the loop's own rules,
then the method registry's validator (`profile.methods.validate_iteration`) against the iteration's budget.

Every problem names its rule in brackets:

    [schema]         methods.schema.json (the loop's fields: name, description, ablation_flag ...)
    [iter]           `iter` is the iteration's own number
    [ablation_flag]  each flag removes one method
    [probe]          every call shape in a method's `builtins` has an `available` probe for the iteration's arch
                     (`dcuopt probe`, cli/probe.py); the last-resort builtin/asm method must declare its call shapes
    [duplicate] [unknown_id] [axis] [budget] [arch] [history] [priority] [conflicts] [coupled]
                     the registry's rules (pytest_dcuopt/profile/methods.py; docs/profiling.md), checked against
                     `iterv<i>/budget.json` (budget, bound, arch from open-iter's profile) and the methods that
                     earlier iterations tried, with the bound they had then. Fewer methods than an axis budget
                     (never more) pass when analysis.md beside methods.json explains why under a heading
                     `## Fewer methods than the budget` (the seed allows it with a reason)

The registry's schema knows the method fields the registry needs; the loop's own keys (`$comment`,
`ablation_flag`) are removed before it sees the document (LOOP_ONLY_KEYS). When open-iter could not derive a
budget (no profile, or a profile with no utilization), the budget rule is not applied and the result says so;
every other rule still is.
"""
from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from ..profile.methods import Rejection, Tried, load_registry, validate_iteration
from .probe import latest_probe, passing_probe

SCHEMA_NAME = "methods.schema.json"
LOOP_ONLY_KEYS = ("$comment",)  # top-level keys the registry's schema does not know
LOOP_ONLY_METHOD_KEYS = ("ablation_flag", "builtins")  # per-method keys likewise
BUILTIN_METHOD = "compute.inline_asm_builtin"  # the registry's last-resort builtin/inline-asm method
FEWER_HEADING = "Fewer methods than the budget"
_FEWER_SECTION_RE = re.compile(r"^#+\s*" + re.escape(FEWER_HEADING) + r"\s*\n+(?P<text>(?:(?!#).*\S.*\n?)+)",
                               re.I | re.M)


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
    probes: Sequence[Mapping[str, Any]] = ()  # the run's probes.json records (`dcuopt probe`)


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
    problems = loop_rule_problems(path, document, selection.index) + probe_problems(path, document, selection)
    registry, notes = registry_problems(path, document, selection)
    return Validation(problems + registry, notes)


def probe_problems(path: Path, document: Mapping[str, Any], selection: Selection) -> list[str]:
    """[probe]: a builtin or asm call shape is used only after it compiled for the target arch."""
    problems = []
    arch = selection.arch or "<arch>"
    for method in document["methods"]:
        if method["id"] == BUILTIN_METHOD and not method.get("builtins"):
            problems.append(f"[probe] {path}: {BUILTIN_METHOD} declares no `builtins`: list each exact call shape "
                            "the branches use and probe it with `dcuopt probe RUN_DIR --arch ARCH --call '...'`.")
        for call in method.get("builtins", []):
            if passing_probe(selection.probes, call, selection.arch) is not None:
                continue
            last = latest_probe(selection.probes, call)
            seen = (f"the last probe ({last.get('arch')}) says {last.get('status')}: {last.get('reason')}"
                    f"{': ' + str(last.get('compiler_message')) if last.get('compiler_message') else ''}"
                    if last else "no probe of it is recorded in RUN_DIR/probes/probes.json")
            problems.append(f"[probe] {path}: {method['id']} uses `{call}`, which has no passing probe for {arch}; "
                            f"{seen}. Run `dcuopt probe RUN_DIR --arch {arch} --call {json.dumps(call)}`, or drop "
                            "the call.")
    return problems


def fewer_explanation(folder: Path) -> str | None:
    """The text under analysis.md's `## Fewer methods than the budget` heading, or None."""
    analysis = folder / "analysis.md"
    match = _FEWER_SECTION_RE.search(analysis.read_text(errors="replace")) if analysis.is_file() else None
    return match.group("text").strip() if match else None


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
    explained = fewer_explanation(path.parent)
    rejections = validate_iteration(registry_view(document), selection.budget or {}, selection.arch, selection.bound,
                                    selection.history, allow_fewer=explained is not None)
    notes = []
    short = shortfall(document, selection.budget)
    if short and explained is not None:
        notes.append(f"[budget] fewer methods than the budget ({short}), explained in analysis.md: {explained[:300]}")
    elif short:
        rejections.append(Rejection("budget", f"fewer methods than the budget ({short}) are accepted only when "
                                              f"analysis.md explains why under a heading `## {FEWER_HEADING}`"))
    if selection.budget is None:
        rejections = [r for r in rejections if r.rule != "budget"]
        notes.append(f"[budget] not applied: open-iter derived no budget for iteration {selection.index} "
                     f"({selection.no_budget_reason or 'no reason recorded'})")
    problems = [f"{path}: {rejection}" for rejection in rejections]
    if selection.stop and any(r.rule == "budget" for r in rejections):
        problems.append(f"[budget] {path}: the roofline of the current best says '{selection.stop}': the budget is "
                        "0 on every axis; run `dcuopt finalize` instead of selecting methods.")
    return problems, notes


def shortfall(document: Mapping[str, Any], budget: Mapping[str, int] | None) -> str:
    """'memory 1/2, ...' for every axis with fewer selected methods than its budget; '' when none."""
    counts = {axis: sum(1 for m in document["methods"] if m["axis"] == axis) for axis in (budget or {})}
    return ", ".join(f"{axis} {counts[axis]}/{int(n)}" for axis, n in (budget or {}).items() if counts[axis] < int(n))


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
