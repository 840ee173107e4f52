"""The marks a case declares in its ref.py: `pytestmark` (every branch) and `branch_marks` (per branch)."""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from ..errors import CaseError
from .ref_loader import import_ref_module


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
        raise CaseError(f"{ref_path}: branch_marks must be a dict {{branch name: [marks]}}, "
                        f"got {type(declared).__name__}")
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
