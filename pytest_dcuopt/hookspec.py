"""The plugin's own hooks: seams for observers (profilers, ISA checks, ablation) and report extensions.

Implement them in a conftest.py or a plugin, like any pytest hook. Each receives the `Variant`
(pytest_dcuopt.variant: case, toolchain, branch, its build `artifact`, its `record`) at the
moment named, in the pytest process (never inside the kernel's worker).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy
import pytest

if TYPE_CHECKING:
    from pathlib import Path

    from .observe import Observer
    from .report.columns import Column
    from .report.records import BranchRecord
    from .timing.policy import Samples
    from .variant import Variant

hookspec = pluggy.HookspecMarker("pytest")


@hookspec
def pytest_dcuopt_branch_built(variant: Variant, config: pytest.Config) -> None:
    """A branch was built (or its build failed: `variant.setup_error`) and its worker is ready.

    Example, a conftest.py that logs every build command::

        def pytest_dcuopt_branch_built(variant, config):
            if variant.artifact is not None:
                print(variant.label, variant.artifact.command)
    """


@hookspec
def pytest_dcuopt_branch_checked(variant: Variant, config: pytest.Config, failure: str | None) -> None:
    """The correctness stage ended for a branch; `failure` is the message of its first wrong result, or None."""


@hookspec
def pytest_dcuopt_branch_timed(variant: Variant, config: pytest.Config, samples: Samples) -> None:
    """A branch was timed; `samples` are the harness's samples (what pytest-benchmark stored)."""


@hookspec
def pytest_dcuopt_update_branch_record(record: BranchRecord, config: pytest.Config) -> None:
    """Add fields to a branch's record before state.json is written (put them under `record.observations`).

    Example, tag every record with the CI job::

        def pytest_dcuopt_update_branch_record(record, config):
            record.observations["ci_job"] = os.environ.get("CI_JOB_ID")
    """


@hookspec
def pytest_dcuopt_state_written(state: dict[str, Any], run_dir: Path, config: pytest.Config) -> None:
    """state.json and summary.md were written to `run_dir` (upload them, post a comment, gate on them...)."""


@hookspec
def pytest_dcuopt_observers(config: pytest.Config) -> list[Observer]:
    """Observers to attach to kernel cases: each returns its `Observer`s (see pytest_dcuopt.observe).

    A branch carrying an observer's marker (in ref.py's `pytestmark` or `branch_marks`) gets a
    `test_<observer.name>_<toolchain>[<branch>]` item that runs `observer.observe(...)`.
    The built-in `isa`, `ablation` and `profile` observers are registered through this hook (plugin.py).

    Example, a conftest.py adding an observer of your own::

        def pytest_dcuopt_observers(config):
            return [MyObserver()]
    """
    raise NotImplementedError  # a specification: pluggy calls the implementations, never this body


@hookspec
def pytest_dcuopt_summary_columns(config: pytest.Config) -> list[Column]:
    """Columns to add to the branch tables of summary.md and the terminal, after the built-in ones.

    Called once, at session end before summary.md is written (on the xdist controller). A column is a
    `pytest_dcuopt.report.columns.Column`: its header, `read(branch_name, branch)` that takes the value from the
    branch's entry in state.json (at a benchmark size, the size's entry over the branch's own), and optionally
    `render(value, text)` (by default `-` for None, else the value as free text, escaped for the table).

    Example, a conftest.py that records a figure and shows it as a column::

        from pytest_dcuopt.report.columns import Column

        def pytest_dcuopt_update_branch_record(record, config):
            record.observations["threads"] = 8

        def pytest_dcuopt_summary_columns(config):
            return [Column("threads", lambda name, branch: branch["observations"].get("threads"))]
    """
    raise NotImplementedError  # a specification: pluggy calls the implementations, never this body
