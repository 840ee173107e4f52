"""Every marker the plugin defines, declared once and documented in `pytest --markers`.

Marks on kernel cases come from the case's ref.py, since a case has no test file:

    pytestmark = [pytest.mark.isa(...)]                     # every branch of the case
    branch_marks = {"float4": [pytest.mark.isa(...)]}       # one branch (any mark, not only isa)

The `isa` mark's keywords are validated by `isa.spec.IsaSpec.from_kwargs` (whitelist, errors that
quote the bad key); see docs/isa.md.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

import pytest

from .case import import_ref_module
from .errors import CaseError

CASE_MARKER = "dcuopt"
ISA_MARKER = "isa"

MARKERS: dict[str, str] = {
    CASE_MARKER: "dcuopt(case, toolchain): set by pytest_dcuopt on every test it generates for a kernel case; "
                 "select them with `-m dcuopt`.",
    ISA_MARKER: "isa(require=, forbid=, methods=, function=, family=, arch=, max_vgprs=, max_sgprs=, max_agprs=, "
                "max_registers=, max_shared_bytes=, max_scratch_bytes=, max_spills=, min_occupancy=, reason=, "
                "strict=): check a kernel branch's generated ISA and resources in test_isa_<toolchain>[<branch>]; "
                "put it in the case's ref.py (pytestmark, or branch_marks = {branch: [marks]}). See docs/isa.md.",
}


def register(config: pytest.Config) -> None:
    for line in MARKERS.values():
        config.addinivalue_line("markers", line)


def isa_specs(item: pytest.Item) -> list[Any]:
    """Validated IsaSpecs of the item's `isa` marks, each saying where it was declared (raises IsaMarkError)."""
    from .isa.spec import IsaSpec

    specs = []
    for node, mark in item.iter_markers_with_node(ISA_MARKER):
        origin = "ref.py branch_marks" if node is item else f"{node.name} pytestmark"
        specs.append(IsaSpec.from_kwargs(mark.kwargs, mark.args, origin))
    return specs


def read_case_marks(ref_path: Path, branches: Iterable[str]) -> tuple[list[pytest.Mark], dict[str, list[pytest.Mark]]]:
    """(`pytestmark`, `branch_marks`) of a case's ref.py.

    ref.py is imported only when its text mentions one of the two names, so cases without marks
    cost nothing at collection. Raises CaseError (shown as the case's failing contract test).
    """
    text = ref_path.read_text(errors="replace")
    if "pytestmark" not in text and "branch_marks" not in text:
        return [], {}
    module = import_ref_module(ref_path)
    module_marks = _as_marks(getattr(module, "pytestmark", []), f"{ref_path}: pytestmark")
    declared = getattr(module, "branch_marks", {}) or {}
    if not isinstance(declared, dict):
        raise CaseError(f"{ref_path}: branch_marks must be a dict {{branch name: [marks]}}, got {type(declared).__name__}")
    known = set(branches)
    unknown = sorted(set(declared) - known)
    if unknown:
        raise CaseError(f"{ref_path}: branch_marks names {unknown}, which are not branches of this case "
                        f"(branches: {sorted(known)}). Fix the name or add branches/<name>/kernel.<ext>.")
    per_branch = {name: _as_marks(marks, f"{ref_path}: branch_marks[{name!r}]") for name, marks in declared.items()}
    return module_marks, per_branch


def _as_marks(value: Any, where: str) -> list[pytest.Mark]:
    items = value if isinstance(value, (list, tuple)) else [value]
    marks = []
    for item in items:
        mark = getattr(item, "mark", item)
        if not isinstance(mark, pytest.Mark):
            raise CaseError(f"{where}: {item!r} is not a pytest mark; write e.g. [pytest.mark.isa(require=[...])]")
        marks.append(mark)
    return marks
