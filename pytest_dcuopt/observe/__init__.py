"""Observers: checks and measurements attached to a branch by a marker (ISA, ablation, profile).

An observer is looked up through the `pytest_dcuopt_observers` hook. For every kernel case,
every toolchain and every branch that carries the observer's marker (and that `applies` says it
can judge), collection adds `test_<name>_<toolchain>[<branch>]`, whose body calls `observe`.
An observer sees the run through `context.RunContext` only (options, run dir, build settings, availability,
resolve, add_report). Observers keep their detailed results with `context.add_report(name, entry)`; the session writes
them to `<run dir>/<report_name>` through `write_report`, and xdist workers hand them back.

To add one: copy `observe/isa.py`'s `IsaObserver`, give it a new `name`/`marker`, declare the
marker in `markers.py`, and return an instance from a `pytest_dcuopt_observers` hook implementation.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import pytest

from ..context import require_built

if TYPE_CHECKING:
    from ..context import RunContext
    from ..toolchains.base import Artifact, Toolchain
    from ..variant import Variant


class Observer(Protocol):
    name: str  # test name part (`test_<name>_<toolchain>`) and report key
    marker: str  # the pytest mark that attaches it to branches
    report_name: str  # file written in the run directory
    measures: bool  # it times or profiles the kernel: the session's background builds are waited for first

    def applies(self, toolchain: type[Toolchain], marks: Sequence[pytest.Mark]) -> bool:
        """Whether a test is generated for a branch of `toolchain` carrying `marks`."""

    def observe(self, context: RunContext, variant: Variant, item: pytest.Item) -> None:
        """The test body: pass, fail or skip through pytest, and record what was seen."""

    def write_report(self, path: Path, entries: Sequence[Mapping[str, Any]], header: Mapping[str, Any]) -> None:
        """Write the collected entries of this run."""


def built_artifact(context: RunContext, variant: Variant, *, runs_kernel: bool) -> Artifact:
    """The variant's artifact, built (or taken from the cache) for an observer's test (`context.require_built`: skips
    when the toolchain cannot build here, or cannot run kernels here when the observer `runs_kernel`; fails with
    the branch's build error)."""
    require_built(context, variant, runs_kernel=runs_kernel)
    assert variant.artifact is not None
    return variant.artifact


__all__ = ["Observer", "built_artifact"]
