"""The run's results, written at session end by the process that ran the whole run (the xdist controller): the
branch records' hooks and plausibility, state.json, summary.md and its plots, the CI step summary, the observers'
reports, `latest`; and what the terminal summary lists of them."""
from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from . import __version__
from .errors import ReportError
from .files import point_latest, write_atomic
from .gate import REPORT_NAME as GATE_REPORT
from .gate import xdist_workers
from .gate.ci import append_step_summary
from .report.columns import BRANCH_COLUMNS, Column, with_added
from .report.machine import machine_info, now
from .report.plausibility import flag_records
from .report.plots import write_run_plots
from .report.state import build_state, validate_state
from .report.summary import render_summary, terminal_lines
from .run.integrity import DIGESTS
from .selection import run_selection

if TYPE_CHECKING:
    from .session import DcuOptSession

SUMMARY_COLUMNS_KEY = pytest.StashKey[tuple[Column, ...]]()  # the branch tables' columns, chosen at session end


def finish(session: DcuOptSession, exit_status: int | None, interrupted: str | None = None,
           partial: Sequence[str] = ()) -> dict[str, Any]:
    """Write state.json, summary.md and the observers' reports. Each file is written on its own: one
    that fails (a hook raising, a schema violation, a full disk) does not cost the others, and the
    errors are raised together at the end as a `ReportError`."""
    errors: list[str] = []
    config, options, records = session.config, session.options, session.records
    for record in records.values():
        _collect(errors, "pytest_dcuopt_update_branch_record", config.hook.pytest_dcuopt_update_branch_record,
                 record=record, config=config)
    if any(record.timing or record.sizes for record in records.values()):
        _collect(errors, "the plausibility check", flag_records, records.values(),
                 options.allow_implausible, options.max_speedup)
    header = {
        "tool": {"name": "pytest_dcuopt", "version": __version__},
        "created_at": session.created_at, "finished_at": now(), "run_dir": str(options.run_dir),
        "exit_status": exit_status, "interrupted": interrupted, "machine": machine_info(),
        "options": options.to_json(), "toolchains": session.toolchains_json(),
        "containment": {"harness": session.harness_containment}, "integrity": _integrity(errors),
        "scope": {"complete": not partial, "partial_because": list(partial), "selection": run_selection(config),
                  "workers": xdist_workers(config)},
    }
    state = build_state(records.values(), header)
    if session.gate is not None:
        _collect(errors, "the regression gate", session.gate.attach, state, session.reports.get(GATE_REPORT, []))
    try:
        validate_state(state)
    except Exception as exc:  # still write it: a schema slip must not lose the run's results
        state["validation_error"] = f"{type(exc).__name__}: {str(exc)[:2000]}"
        errors.append(f"state.json does not match its schema ({str(exc).splitlines()[0]}); written anyway "
                      "with `validation_error` set")
    run_dir = options.run_dir
    session.state = state
    _collect(errors, "state.json", write_atomic, run_dir / "state.json",
             json.dumps(state, indent=2, default=str) + "\n")
    columns = config.stash[SUMMARY_COLUMNS_KEY] = _summary_columns(config, errors)
    # The plots (PNG, beside summary.md) are drawn first so that summary.md links the files just written.
    _collect(errors, "summary.md", lambda: write_atomic(
        run_dir / "summary.md", render_summary(state, columns) + "\n".join(write_run_plots(state, run_dir))))
    _collect(errors, "$GITHUB_STEP_SUMMARY", append_step_summary, state)
    for name, entries in sorted(session.reports.items()):
        observer = session.observers.get(name)
        if observer is not None and entries:
            _collect(errors, observer.report_name, observer.write_report, run_dir / observer.report_name,
                     entries, {k: header[k] for k in ("tool", "created_at", "run_dir")})
    if partial:  # `latest` names the newest complete run: what --dcuopt-compare=latest gates against
        session.latest_note = (f"latest: left as it was: this run is partial ({'; '.join(partial)}), and `latest` "
                               "names the newest complete run")
    else:
        point_latest(run_dir)
    _collect(errors, "pytest_dcuopt_state_written", config.hook.pytest_dcuopt_state_written,
             state=state, run_dir=run_dir, config=config)
    if errors:
        raise ReportError("writing the run's results failed in part:\n  " + "\n  ".join(errors))
    return state


def _integrity(errors: list[str]) -> dict[str, Any]:
    """Whether the files the run relies on are as the pytest process first read them (run/integrity.py); each
    that changed is an error of the run, naming the file."""
    changed = DIGESTS.changed()
    if changed:
        errors.append("files this run relies on changed while its kernels ran (a kernel writes outside its "
                      "outputs; restore them, e.g. with git checkout, and remove the branch that did it):\n    "
                      + "\n    ".join(changed))
    return {"watched": len(DIGESTS.seen), "changed": changed}


def _summary_columns(config: pytest.Config, errors: list[str]) -> tuple[Column, ...]:
    """The built-in columns and the `pytest_dcuopt_summary_columns` hook's; when the hook fails or returns what
    cannot be a column, the error is the run's and the tables keep the built-in columns."""
    try:
        return with_added(column for found in config.hook.pytest_dcuopt_summary_columns(config=config)
                          for column in found)
    except Exception as exc:
        errors.append(f"pytest_dcuopt_summary_columns: {type(exc).__name__}: {exc}; summary.md and the terminal "
                      "show the built-in columns only")
        return BRANCH_COLUMNS


def _collect(errors: list[str], what: str, action: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """Run one step of writing the results; keep its error (with what it was) instead of stopping."""
    try:
        action(*args, **kwargs)
    except Exception as exc:
        errors.append(f"{what}: {type(exc).__name__}: {exc}")


def report_paths(session: DcuOptSession) -> list[tuple[str, Path]]:
    """(what, path) of every file `finish` wrote."""
    run_dir = session.options.run_dir
    found = [("state", run_dir / "state.json"), ("summary", run_dir / "summary.md")]
    found += [(f"{name} checks", run_dir / session.observers[name].report_name)
              for name, entries in sorted(session.reports.items()) if entries and name in session.observers]
    return found


def summary_lines(session: DcuOptSession) -> list[str]:
    """The terminal's table of branches per case (none before `finish` wrote the state)."""
    if not session.state:
        return []
    columns: tuple[Column, ...] = session.config.stash.get(SUMMARY_COLUMNS_KEY, BRANCH_COLUMNS)
    return terminal_lines(session.state, columns)
