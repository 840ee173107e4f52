"""methods.json of an iteration: the JSON schema (package data beside this module) plus the loop's rules.

Rules beyond the schema: `iter` is the iteration's own number, ids are unique, a method that an earlier
iteration already tried is selectable again only with a `retry_reason` (e.g. the bottleneck changed), and
`ablation_flag`s are unique (each removes one method). The method's ISA expectations come from the ISA
signature registry when it has the id; an id it does not know is allowed (your own method) and said so.
"""
from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

SCHEMA_NAME = "methods.schema.json"


def schema() -> dict[str, Any]:
    return dict(json.loads((resources.files(__package__ or "pytest_dcuopt.cli") / SCHEMA_NAME).read_text()))


def template(index: int) -> dict[str, Any]:
    return {"$comment": "Fill `methods` (docs/loop.md): every branch of this iteration implements the same methods. "
                        "Give each an `ablation_flag` (e.g. -DDCUOPT_NO_UNROLL) that the kernel honours with "
                        "#ifndef, so close-iter can measure what it is worth.",
            "iter": index, "methods": []}


def validate(path: Path, index: int, earlier: list[dict[str, Any]]) -> list[str]:
    """Every problem of `path` as one sentence each ([] when it is valid). `earlier`: methods of other iterations."""
    import jsonschema

    if not path.is_file():
        return [f"{path} is missing; `dcuopt open-iter` writes a template to fill."]
    try:
        document = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        return [f"{path} is not valid JSON: {exc}."]
    validator = jsonschema.Draft7Validator(schema())
    problems = [f"{path}: {'/'.join(str(p) for p in error.absolute_path) or '(top)'}: {error.message}"
                for error in sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))]
    if problems:
        return problems
    return rule_problems(path, document, index, earlier)


def rule_problems(path: Path, document: dict[str, Any], index: int, earlier: list[dict[str, Any]]) -> list[str]:
    problems = []
    if document["iter"] != index:
        problems.append(f"{path}: iter is {document['iter']}, but this is iteration {index}; set \"iter\": {index}.")
    ids = [m["id"] for m in document["methods"]]
    problems += [f"{path}: method {i!r} is listed {ids.count(i)} times; list each method once."
                 for i in sorted(set(ids)) if ids.count(i) > 1]
    flags = [m["ablation_flag"] for m in document["methods"] if "ablation_flag" in m]
    problems += [f"{path}: ablation_flag {f!r} is given to {flags.count(f)} methods; each flag removes one method."
                 for f in sorted(set(flags)) if flags.count(f) > 1]
    tried = {m["id"]: m.get("iter") for m in earlier}
    for method in document["methods"]:
        if method["id"] in tried and not method.get("retry_reason"):
            problems.append(f"{path}: method {method['id']!r} was already tried in iteration {tried[method['id']]}; "
                            "select another, or add \"retry_reason\" saying what changed (e.g. the bottleneck class).")
    return problems


def registry_notes(document: dict[str, Any]) -> list[str]:
    """Methods the ISA signature registry does not know (no ISA expectation can be checked for them)."""
    from ..isa.signatures import load

    known = set(load().methods)
    return [f"method {m['id']!r} is not in the ISA signature registry: its ISA cannot be checked"
            for m in document["methods"] if m["id"] not in known]
