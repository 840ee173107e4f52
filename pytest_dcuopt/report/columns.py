"""The columns of the branch tables in summary.md and the terminal: one `Column` each, in `BRANCH_COLUMNS`.

A column says its header, how to read its value from a branch's entry in state.json (at a benchmark size, the
size's entry over the branch's own fields) and how to render that value as a cell. A conftest or plugin adds
columns after the built-in ones by returning them from the `pytest_dcuopt_summary_columns` hook (hookspec.py)."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import DcuOptError

# Renders free text (a name, a reason) for where the table lands: `markdown.md_text` in summary.md (shown as
# written, never ending the row), `markdown.one_line` in the terminal.
Text = Callable[[Any], str]
Read = Callable[[str, Mapping[str, Any]], Any]
Render = Callable[[Any, Text], str]


def text_or_dash(value: Any, text: Text) -> str:
    """The default rendering: `-` for no value, else the value as free text."""
    return "-" if value is None else text(value)


@dataclass(frozen=True)
class Column:
    """One column of the branch table. `read(branch_name, branch)` gets the branch's entry in state.json (what
    `report.records.BranchRecord` wrote; a hook's own fields are under `branch["observations"]`);
    `render(value, text)` makes the cell, with `text` escaping free text for the table's output."""

    header: str
    read: Read
    render: Render = text_or_dash

    def cell(self, name: str, branch: Mapping[str, Any], text: Text) -> str:
        return self.render(self.read(name, branch), text)


def formatted(form: Callable[[Any], str]) -> Render:
    """A rendering that formats the value itself (figures: nothing in them to escape)."""
    return lambda value, _text: form(value)


def ms(value: Any) -> str:
    return "-" if value is None else f"{value:.4g}"


def times(value: Any) -> str:
    return "-" if value is None else f"{value:.2f}x"


def _branch_cell(value: tuple[str, bool], text: Text) -> str:
    name, champion = value
    return f"{text(name)}{'*' if champion else ''}"


def _verdict(_name: str, branch: Mapping[str, Any]) -> str:
    if branch.get("skipped") and branch.get("correct") is None:
        return "skipped"
    verdict = {True: "pass", False: "FAIL", None: "-"}[branch.get("correct")]
    return f"{verdict} implausible" if branch.get("implausible") else verdict


def _timing(_name: str, branch: Mapping[str, Any]) -> Mapping[str, Any]:
    return branch.get("timing") or {}


def _median_cell(timing: Mapping[str, Any]) -> str:
    """The median, with the timing method when it is not the default and a warning when it is not to be trusted."""
    cell = ms(timing.get("median_ms"))
    if timing.get("method") == "sync":
        cell += " [sync]"
    if timing and timing.get("quality", "ok") != "ok":
        cell += " (too few clean samples)"
    if timing.get("representative") is False:
        cell += " (not representative: emulated)"
    return cell


def _ab_cell(timing: Mapping[str, Any]) -> str:
    """The interleaved medians the speedup came from: baseline/branch, or - when no A/B ran."""
    ab = timing.get("interleaved")
    if not ab:
        return "-"
    return f"{ms(ab.get('baseline_median_ms'))}/{ms(ab.get('median_ms'))}"


def _beats(name: str, branch: Mapping[str, Any]) -> str:
    """yes / no against the baseline; `-` when there was no comparison (never timed, or no timed baseline);
    `disagree` when the own-run and A/B figures are too far apart to say."""
    if name == "baseline":
        return ""
    if branch.get("implausible") and not branch["implausible"].get("allowed"):
        return "implausible"
    if branch.get("measurements_disagree"):
        return "disagree"
    if branch.get("beats_baseline"):
        return "yes"
    return "no" if branch.get("speedup_vs_baseline") is not None else "-"


def _isa(_name: str, branch: Mapping[str, Any]) -> str:
    """The ISA verdict of the branch's isa marks: pass, FAIL, inconclusive, or - (no marks checked)."""
    outcome = str((branch.get("isa") or {}).get("outcome") or "-")
    return {"pass": "pass", "fail": "FAIL"}.get(outcome, outcome)


def _throughput(unit: str) -> Read:
    return lambda _name, branch: (branch.get("throughput") or {}).get(unit)


BRANCH_COLUMNS: tuple[Column, ...] = (
    Column("branch", lambda name, branch: (name, bool(branch.get("champion"))), _branch_cell),  # `*`: champion
    Column("correct", _verdict, formatted(str)),
    Column("median ms", _timing, formatted(_median_cell)),
    Column("IQR ms", lambda _name, branch: _timing(_name, branch).get("iqr_ms"), formatted(ms)),
    Column("rounds", lambda _name, branch: _timing(_name, branch).get("rounds", "-"), formatted(str)),
    Column("A/B ms", _timing, formatted(_ab_cell)),
    Column("speedup", lambda _name, branch: branch.get("speedup_vs_baseline"), formatted(times)),
    Column("beats noise", _beats, formatted(str)),
    Column("GB/s", _throughput("gbps"), formatted(ms)),
    Column("GFLOP/s", _throughput("gflops"), formatted(ms)),
    Column("ISA", _isa),
)


def with_added(added: Iterable[object], columns: Sequence[Column] = BRANCH_COLUMNS) -> tuple[Column, ...]:
    """`columns` followed by the `added` ones (from the hook), each a `Column` whose header no other column has."""
    result = list(columns)
    for column in added:
        if not isinstance(column, Column):
            raise DcuOptError(f"pytest_dcuopt_summary_columns returned {column!r} ({type(column).__name__}), not a "
                              "pytest_dcuopt.report.columns.Column: return Column(header, read[, render]) objects")
        if not column.header or column.header in [c.header for c in result]:
            raise DcuOptError(f"pytest_dcuopt_summary_columns: the column header {column.header!r} is empty or "
                              f"already taken (the table has {', '.join(c.header for c in result)}): a table "
                              "needs one column per header; give it a name of its own")
        result.append(column)
    return tuple(result)
