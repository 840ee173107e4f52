"""`dcuopt_case`: hand-written tests beside a case reuse the harness (build, isolation, comparison)."""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .stages import case_check
from .toolchains import registered_names, toolchain_class

if TYPE_CHECKING:
    from .session import DcuOptSession
    from .variant import Variant


class CaseHandle:
    """The kernel case in the directory of the requesting test module."""

    def __init__(self, session: DcuOptSession, root: Path, nodeid: str) -> None:
        self.session = session
        self.root = root
        self.nodeid = nodeid
        self.case = session.case(root)

    def variant(self, branch: str = "baseline", toolchain: str | None = None) -> Variant:
        for name in [toolchain] if toolchain else registered_names():
            for candidate in self.case.sources_for(toolchain_class(name).extensions):
                if candidate.name == branch:
                    return self.session.variant(self.root, name, branch, candidate.source)
        known = sorted({b.name for b in self.case.branches})
        pytest.fail(f"case {self.case.name!r} has no branch {branch!r}"
                    f"{' for toolchain ' + repr(toolchain) if toolchain else ''}; branches: {known}", pytrace=False)

    def check(self, branch: str = "baseline", dims: Mapping[str, Any] | None = None, seed: int = 0,
              toolchain: str | None = None) -> None:
        """Run one call at `dims` (merged over dims.json) and compare with the reference.

        Fails like the generated test."""
        __tracebackhide__ = True
        variant = self.variant(branch, toolchain)
        message = None
        try:
            case_check(self.session, variant, {**self.case.dims, **dict(dims or {})}, seed, self.nodeid)
        except AssertionError as exc:
            message = str(exc)
        if message is not None:
            pytest.fail(message, pytrace=False)
