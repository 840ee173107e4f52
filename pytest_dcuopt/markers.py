"""Every marker the plugin defines, declared once and documented in `pytest --markers`.

Marks on kernel cases come from the case's ref.py, since a case has no test file:

    pytestmark = [pytest.mark.isa(...)]                     # every branch of the case
    branch_marks = {"float4": [pytest.mark.isa(...)]}       # one branch (any mark, not only isa)

The `ablation` mark's keywords are `ABLATION_KEYWORDS` (validated by `observe.ablation.AblationSpec.from_mark`).
The `isa` mark's keywords are validated by `isa.spec.IsaSpec.from_kwargs` (whitelist, errors that
quote the bad key); see docs/isa.md. Reading marks from ref.py: `case.marks.read_case_marks`.
"""
from __future__ import annotations

from typing import Any

import pytest

CASE_MARKER = "dcuopt"
ISA_MARKER = "isa"
PROFILE_MARKER = "profile"
ABLATION_MARKER = "ablation"
# The keywords an `ablation` mark takes: the help line below lists them, `observe.ablation.AblationSpec.from_mark`
# accepts exactly these (the isa and profile marks keep theirs beside their validators, `ALLOWED` in their spec.py).
ABLATION_KEYWORDS = ("methods", "rounds", "max_rounds", "min_effect", "negligible", "reason")

MARKERS: dict[str, str] = {
    CASE_MARKER: "dcuopt(case, toolchain): set by pytest_dcuopt on every test it generates for a kernel case; "
                 "select them with `-m dcuopt`.",
    ISA_MARKER: "isa(require=, forbid=, methods=, function=, family=, arch=, max_vgprs=, max_sgprs=, max_agprs=, "
                "max_registers=, max_shared_bytes=, max_scratch_bytes=, max_spills=, min_occupancy=, reason=, "
                "strict=): check a kernel branch's generated ISA and resources in test_isa_<toolchain>[<branch>]; "
                "put it in the case's ref.py (pytestmark, or branch_marks = {branch: [marks]}). See docs/isa.md.",
    PROFILE_MARKER: "profile(metrics=, sections=, sqtt=, dims=, precision=, timeout_s=, reason=, top=): run a kernel "
                    "branch once under the platform's profiler (perf, ncu, hipprof, rocprof) in "
                    "test_profile_<toolchain>[<branch>]: normalized metrics, roofline bound and axis budget in "
                    "profile.json and the branch record; put it in ref.py like isa. See docs/profiling.md.",
    ABLATION_MARKER: f"ablation({', '.join(f'{k}=' for k in ABLATION_KEYWORDS)}): attribute a branch's speed to its "
                     "methods by building it without each (methods={id: '-DFLAG'}), checking and timing that build "
                     "against the full branch in test_ablation_<toolchain>[<branch>]; put it in ref.py like isa. See "
                     "docs/loop.md.",
}


def register(config: pytest.Config) -> None:
    for line in MARKERS.values():
        config.addinivalue_line("markers", line)


def keyword_only(mark: str, args: tuple[Any, ...], origin: str, example: str, error: type[Exception]) -> str:
    """` (origin)`, how messages about the mark say where it was declared ('' without an origin).

    Raises `error` when the mark was given positional arguments: dcuopt's marks take keywords only, and `example`
    shows the caller how to write one.
    """
    where = f" ({origin})" if origin else ""
    if args:
        raise error(f"{mark} mark{where} takes keyword arguments only, got positional {args!r}; write e.g. {example}")
    return where
