"""Writes references/optimization_catalog.md to stdout: per method of the registry, what it changes, when it pays, the
counters that show the need for it, and the ISA that proves it was applied, all from the packaged method registry and
isa_signatures.json (so the catalog cannot drift from the data the loop validates against;
tests/unit/profile/test_methods.py checks the committed file).

    python tools/optimization_catalog.py > references/optimization_catalog.md
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from importlib import resources
from typing import Any

from pytest_dcuopt.profile.methods import load_registry

FAMILY_NAMES = {"dcu": "Hygon DCU", "amdgcn": "AMDGCN", "sass": "NVIDIA SASS", "x86": "x86"}


def catalog_markdown(registry: Mapping[str, Any] | None = None, signatures: Mapping[str, Any] | None = None) -> str:
    """references/optimization_catalog.md: per method, what it changes, when it pays, the counters that show the
    need for it, and the ISA that proves it was applied, all from the registry and isa_signatures.json (so the
    catalog cannot drift from the data the loop validates against; tests/unit/profile/test_methods.py checks)."""
    registry = registry or load_registry()
    signatures = signatures or json.loads(resources.files("pytest_dcuopt.isa").joinpath(
        "data/isa_signatures.json").read_text(encoding="utf-8"))
    lines = ["# Optimization catalog", "",
             "Generated from the method registry (`pytest_dcuopt/isa/data/methods.json`) and the ISA signatures",
             "(`pytest_dcuopt/isa/data/isa_signatures.json`) by `tools/optimization_catalog.py`; edit those files,",
             "then regenerate: `python tools/optimization_catalog.py > references/optimization_catalog.md`.",
             "Metric names are the normalized ones of [dcu_metrics_guide.md](dcu_metrics_guide.md).", ""]
    ordered = sorted(registry["methods"].items(), key=lambda kv: (AXIS_ORDER.index(kv[1]["axis"]), kv[1]["priority"]))
    axis = None
    for method_id, method in ordered:
        if method["axis"] != axis:
            axis = method["axis"]
            lines += [f"## {axis.capitalize()} axis", ""]
        lines += _catalog_entry(method_id, method, signatures["methods"].get(method_id, {}))
    return "\n".join(lines)


AXIS_ORDER = ("memory", "compute", "latency")


def _catalog_entry(method_id: str, method: Mapping[str, Any], signature: Mapping[str, Any]) -> list[str]:
    needs = method["requires"]
    requirement = ", ".join([*(f"feature `{f}`" for f in needs["features"]), *(f"arch {a}" for a in needs["archs"])])
    lines = [f"### `{method_id}` (priority {method['priority']})", "",
             f"- **Changes**: {method['description']}", f"- **Pays when**: {method['pays_when']}"]
    lines += [f"- **Counter**: `{i['metric']}` ({i['direction'].replace('_', ' ')}): {i['why']}"
              for i in method["indicators"]]
    if requirement:
        lines.append(f"- **Requires**: {requirement}")
    if method["coupled"] or method["conflicts"]:
        lines.append(f"- **Coupled with**: {', '.join(method['coupled']) or '-'}; **conflicts with**: "
                     f"{', '.join(method['conflicts']) or '-'}")
    if signature.get("hint"):
        lines.append(f"- **When the ISA check fails**: {signature['hint']}")
    for family, entry in signature.get("families", {}).items():
        lines.append(f"- **ISA ({FAMILY_NAMES.get(family, family)})**: {_isa_evidence(entry)}")
    return [*lines, ""]


def _isa_evidence(entry: Mapping[str, Any]) -> str:
    if entry.get("evidence") == "none":
        return f"no instruction of its own: {entry.get('reason', '')}"
    groups = [" and ".join(f"`{p}`" for p in group.get("all", [])) for group in entry.get("groups", [])]
    found = " or ".join(g for g in groups if g)
    if entry.get("resources"):
        found = (found + "; " if found else "") + f"resources {json.dumps(entry['resources'])}"
    return found or "(no pattern)"


if __name__ == "__main__":
    print(catalog_markdown(), end="")
