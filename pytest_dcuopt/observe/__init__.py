"""Observers: checks and measurements attached to a branch by a marker (ISA today; profiling, ablation next).

An observer is looked up through the `pytest_dcuopt_observers` hook. For every kernel case,
every toolchain and every branch that carries the observer's marker (and that `applies` says it
can judge), collection adds `test_<name>_<toolchain>[<branch>]`, whose body calls `observe`.
Observers keep their detailed results with `context.add_report(name, entry)`; the session writes
them to `<run dir>/<report_name>` through `write_report`, and xdist workers hand them back.

To add one: copy `observe/isa.py`'s `IsaObserver`, give it a new `name`/`marker`, declare the
marker in `markers.py`, and return an instance from a `pytest_dcuopt_observers` hook implementation.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import pytest

    from ..toolchains.base import Availability, Toolchain
    from ..variant import Variant


class ObserverContext(Protocol):
    """What an observer may ask of the running session."""

    def availability(self, toolchain: str) -> Availability: ...

    def resolve(self, variant: Variant) -> None: ...

    def add_report(self, observer: str, entry: dict[str, Any]) -> None: ...


class Observer(Protocol):
    name: str  # test name part (`test_<name>_<toolchain>`) and report key
    marker: str  # the pytest mark that attaches it to branches
    report_name: str  # file written in the run directory

    def applies(self, toolchain: type[Toolchain], marks: Sequence[pytest.Mark]) -> bool:
        """Whether a test is generated for a branch of `toolchain` carrying `marks`."""

    def observe(self, context: ObserverContext, variant: Variant, item: pytest.Item) -> None:
        """The test body: pass, fail or skip through pytest, and record what was seen."""

    def write_report(self, path: Path, entries: Sequence[Mapping[str, Any]], header: Mapping[str, Any]) -> None:
        """Write the collected entries of this run."""
