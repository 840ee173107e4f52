"""SessionView: what the generated tests' bodies, their collection and the run's selection see of the session.

`context.RunContext` is what observers get; the stages (`stages.py`), the test functions `collect.py` generates and
`selection.py` also read the session's caches (cases, variants, records), its gate and its observers. They see them
through this protocol, so none of them imports `session.py` (which imports them): the session
(`session.DcuOptSession`) is the implementation.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import pytest

from .context import RunContext

if TYPE_CHECKING:
    from .case.model import KernelCase
    from .gate.judge import Gate
    from .observe import Observer
    from .report.records import BranchRecord
    from .variant import Variant


class SessionView(RunContext, Protocol):
    """The run's configuration, caches, gate and observers, and the session's steps its test bodies take."""

    config: pytest.Config
    gate: Gate | None  # None without --dcuopt-compare
    observers: dict[str, Observer]
    variants: dict[tuple[str, str, str], Variant]
    records: dict[tuple[str, str, str], BranchRecord]
    selected: set[tuple[Path, str, str]]  # (case folder, toolchain, branch) of the selected tests
    baselines_tried: set[tuple[str, str, str]]  # baselines checked here for another worker's A/B

    def case(self, root: Path) -> KernelCase:
        """The case in `root`, loaded once."""

    def variant(self, root: Path, toolchain_name: str, branch_id: str, source: Path) -> Variant:
        """The branch's variant, made once per (case, toolchain, branch)."""

    def branch_variant(self, root: Path, toolchain: str, branch: str) -> Variant | None:
        """The variant of a branch named by its test id (None when the case has no such branch)."""

    def quiet(self) -> None:
        """Before a measurement: wait until no background build of this process runs."""
