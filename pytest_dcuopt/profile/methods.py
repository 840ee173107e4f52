"""The method registry (`isa/data/methods.json`) and the validator of an iteration's `methods.json`.

The registry refers to `isa/data/isa_signatures.json` by id: that file stays the one list of method ids, and
`validate_registry` fails unless both hold the same ids with the same axis. Every rejection of
`validate_iteration` is a `Rejection(rule, message)`; the rules, in the order they are checked:

    schema       the document matches iteration_methods.schema.json
    duplicate    a method id appears once
    unknown_id   the id is in the registry
    axis         axis and priority equal the registry's
    budget       the count per axis equals the axis budget (so the total equals the budget's sum); with
                 `allow_fewer`, an axis may have fewer (the caller holds the explanation), never more
    arch         the target arch has every feature the method requires, and matches its arch globs
    history      a method tried before is selectable again only when the bottleneck class changed since
    priority     every higher-priority method of the same axis is selected or listed in skipped_higher
                 with a known reason (the priority scan)
    conflicts    no two conflicting methods in one iteration
    coupled      a coupled method comes with its partner (or after it was applied)
"""
from __future__ import annotations

import fnmatch
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from ..errors import DcuOptError
from .metrics import CANONICAL


class RegistryError(DcuOptError):
    """The method registry itself is invalid."""


@dataclass(frozen=True)
class Rejection:
    rule: str
    message: str

    def __str__(self) -> str:
        return f"[{self.rule}] {self.message}"


@dataclass(frozen=True)
class Tried:
    """A method selected in an earlier iteration, and the bound the kernel had then."""

    id: str
    bound: str
    iter: int = 0


def _data(package: str, name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(resources.files(package).joinpath(name).read_text(encoding="utf-8"))
    return data


@lru_cache(maxsize=1)
def load_registry() -> dict[str, Any]:
    registry = _data("pytest_dcuopt.isa", "data/methods.json")
    problems = validate_registry(registry)
    if problems:
        raise RegistryError("invalid method registry isa/data/methods.json:\n" + "\n".join(problems))
    return registry


def validate_registry(registry: Mapping[str, Any], signatures: Mapping[str, Any] | None = None) -> list[str]:
    """Every problem of a registry document: schema, ids and axes against isa_signatures.json, references."""
    import jsonschema

    schema = _data("pytest_dcuopt.isa", "data/methods.schema.json")
    errors = [f"schema: {'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}"
              for e in jsonschema.Draft202012Validator(schema).iter_errors(registry)]
    if errors:
        return errors
    signatures = signatures or _data("pytest_dcuopt.isa", "data/isa_signatures.json")
    methods, known = registry["methods"], signatures["methods"]
    problems = [f"{i}: not a method of isa_signatures.json (the one list of ids)"
                for i in sorted(set(methods) - set(known))]
    problems += [f"{i}: in isa_signatures.json but missing from the registry"
                 for i in sorted(set(known) - set(methods))]
    features = {f for listed in registry["arch_features"].values() for f in listed}
    for method_id, method in sorted(methods.items()):
        problems += _method_problems(method_id, method, methods, known, signatures, features)
    problems += _priority_problems(methods)
    return problems


def _method_problems(method_id: str, method: Mapping[str, Any], methods: Mapping[str, Any],
                     known: Mapping[str, Any], signatures: Mapping[str, Any], features: set[str]) -> list[str]:
    problems = []
    if method_id in known and known[method_id]["axis"] != method["axis"]:
        problems.append(f"{method_id}: axis {method['axis']} but isa_signatures.json says {known[method_id]['axis']}")
    for signature in method["isa_signatures"]:
        name = signature.removeprefix("@")
        if name not in (signatures["pattern_sets"] if signature.startswith("@") else known):
            problems.append(f"{method_id}: ISA signature {signature!r} is not in isa_signatures.json")
    for indicator in method["indicators"]:
        if indicator["metric"] not in CANONICAL:
            problems.append(f"{method_id}: indicator metric {indicator['metric']!r} is not a normalized metric")
    for feature in method["requires"]["features"]:
        if feature not in features:
            problems.append(f"{method_id}: requires feature {feature!r} that no arch in arch_features has")
    for relation in ("coupled", "conflicts"):
        for other in method[relation]:
            if other not in methods:
                problems.append(f"{method_id}: {relation} names unknown method {other!r}")
            elif method_id not in methods[other][relation]:
                problems.append(f"{method_id}: {relation} {other!r}, but {other} does not list it back")
    return problems


def _priority_problems(methods: Mapping[str, Any]) -> list[str]:
    seen: dict[tuple[str, int], str] = {}
    problems = []
    for method_id, method in sorted(methods.items()):
        key = (method["axis"], method["priority"])
        if key in seen:
            problems.append(f"{method_id}: priority {key[1]} on {key[0]} is also {seen[key]}'s")
        seen[key] = method_id
    return problems


def arch_features(arch: str | None, registry: Mapping[str, Any] | None = None) -> set[str] | None:
    """The features of `arch` (globs of the registry's arch_features; None when no entry matches)."""
    table = (registry or load_registry())["arch_features"]
    bare = (arch or "").split(":", 1)[0]
    found = [set(features) for pattern, features in table.items() if bare and fnmatch.fnmatch(bare, pattern)]
    return set().union(*found) if found else None


def validate_iteration(document: Mapping[str, Any], budget: Mapping[str, int], arch: str | None, bound: str,
                       history: Sequence[Tried] = (), registry: Mapping[str, Any] | None = None,
                       allow_fewer: bool = False) -> list[Rejection]:
    """Every reason `document` (an iteration's methods.json) is not a valid selection; [] when it is."""
    import jsonschema

    registry = registry or load_registry()
    schema = _data("pytest_dcuopt.profile", "data/iteration_methods.schema.json")
    found = [Rejection("schema", f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}")
             for e in jsonschema.Draft202012Validator(schema).iter_errors(document)]
    if found:
        return found
    selected = document["methods"]
    ids = [m["id"] for m in selected]
    methods = registry["methods"]
    found += [Rejection("duplicate", f"{i} is selected {ids.count(i)} times")
              for i in sorted(set(ids)) if ids.count(i) > 1]
    found += [Rejection("unknown_id", f"{i} is not in the method registry (isa/data/methods.json)") for i in ids
              if i not in methods]
    known = [m for m in selected if m["id"] in methods]
    found += _axis(known, methods) + _budget(selected, budget, allow_fewer) + _arch(known, methods, arch, registry)
    found += _history(known, bound, history) + _priority(known, methods, registry["skip_reasons"])
    found += _relations(known, methods, history)
    return found


def _axis(selected: Sequence[Mapping[str, Any]], methods: Mapping[str, Any]) -> list[Rejection]:
    found = []
    for method in selected:
        entry = methods[method["id"]]
        for key in ("axis", "priority"):
            if method[key] != entry[key]:
                found.append(Rejection("axis", f"{method['id']}: {key} {method[key]!r} differs from the registry's "
                                               f"{entry[key]!r}"))
    return found


def _budget(selected: Sequence[Mapping[str, Any]], budget: Mapping[str, int],
            allow_fewer: bool = False) -> list[Rejection]:
    found = []
    for axis in ("compute", "memory", "latency"):
        count = sum(1 for m in selected if m["axis"] == axis)
        if count > int(budget.get(axis, 0)) or (count < int(budget.get(axis, 0)) and not allow_fewer):
            found.append(Rejection("budget", f"{count} {axis} method(s) selected, the axis budget is "
                                             f"{int(budget.get(axis, 0))} (budget {dict(budget)}, total "
                                             f"{sum(int(v) for v in budget.values())})"))
    return found


def _arch(selected: Sequence[Mapping[str, Any]], methods: Mapping[str, Any], arch: str | None,
          registry: Mapping[str, Any]) -> list[Rejection]:
    features = arch_features(arch, registry)
    found = []
    for method in selected:
        needs = methods[method["id"]]["requires"]
        if needs["archs"] and not any(fnmatch.fnmatch((arch or "").split(":", 1)[0], g) for g in needs["archs"]):
            found.append(Rejection("arch", f"{method['id']} runs only on {needs['archs']}, the target is {arch!r}"))
            continue
        if needs["features"] and features is None:
            found.append(Rejection("arch", f"{method['id']} requires {needs['features']} and arch {arch!r} has no "
                                           "arch_features entry in the registry: add one"))
        elif needs["features"] and features is not None:
            lacking = sorted(set(needs["features"]) - features)
            if lacking:
                found.append(Rejection("arch", f"{method['id']} requires {lacking}, which {arch} does not have"))
    return found


def _history(selected: Sequence[Mapping[str, Any]], bound: str, history: Sequence[Tried]) -> list[Rejection]:
    found = []
    for method in selected:
        same = [t for t in history if t.id == method["id"] and t.bound == bound]
        if same:
            found.append(Rejection("history", f"{method['id']} was tried in iteration {same[-1].iter} while the kernel "
                                              f"was {bound}-bound, and it still is: pick another method (it becomes "
                                              "selectable again when the bound changes)"))
    return found


def _priority(selected: Sequence[Mapping[str, Any]], methods: Mapping[str, Any],
              reasons: Sequence[str]) -> list[Rejection]:
    ids = {m["id"] for m in selected}
    found = []
    for method in selected:
        entry = methods[method["id"]]
        skipped = {s["id"]: s["reason"] for s in method.get("skipped_higher", [])}
        for other_id, other in sorted(methods.items()):
            if other["axis"] != entry["axis"] or other["priority"] >= entry["priority"] or other_id in ids:
                continue
            if other_id not in skipped:
                found.append(Rejection("priority", f"{method['id']} (priority {entry['priority']}) skips "
                                                   f"{other_id} (priority {other['priority']}) without listing it in "
                                                   "skipped_higher"))
            elif skipped[other_id] not in reasons:
                found.append(Rejection("priority", f"{method['id']}: skipped_higher {other_id} gives reason "
                                                   f"{skipped[other_id]!r}; known reasons: {', '.join(reasons)}"))
    return found


def _relations(selected: Sequence[Mapping[str, Any]], methods: Mapping[str, Any],
               history: Sequence[Tried]) -> list[Rejection]:
    ids = [m["id"] for m in selected]
    applied = {t.id for t in history}
    found = []
    for index, method_id in enumerate(ids):
        for other in methods[method_id]["conflicts"]:
            if other in ids[index + 1:]:
                found.append(Rejection("conflicts", f"{method_id} and {other} conflict: never in one iteration"))
        for partner in methods[method_id]["coupled"]:
            if partner not in ids and partner not in applied:
                found.append(Rejection("coupled", f"{method_id} needs {partner} in the same iteration (or applied "
                                                  "before): they only pay together"))
    return found
