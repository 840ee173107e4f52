"""The columns of the branch tables: the median's marks, and columns added after the built-in ones."""
from __future__ import annotations

from typing import Any

import pytest

from pytest_dcuopt.errors import DcuOptError
from pytest_dcuopt.report.columns import BRANCH_COLUMNS, Column, with_added
from pytest_dcuopt.report.records import BranchRecord
from pytest_dcuopt.report.state import build_state
from pytest_dcuopt.report.summary import render_summary, terminal_lines

MEDIAN = next(column for column in BRANCH_COLUMNS if column.header == "median ms")


def test_an_emulated_timing_is_marked_not_representative() -> None:
    interpreted = {"correct": True, "timing": {"median_ms": 3.5, "representative": False, "rounds": 5}}
    assert MEDIAN.cell("b1", interpreted, str) == "3.5 (not representative: emulated)"
    assert MEDIAN.cell("b1", {"correct": True, "timing": {"median_ms": 3.5, "rounds": 5}}, str) == "3.5"


def _state() -> dict[str, Any]:
    base = BranchRecord("vadd", "cpu", "baseline", "vadd/kernel.cpp", correct=True, examples=3)
    base.observations["threads"] = 8
    odd = BranchRecord("vadd", "cpu", "odd", "vadd/branches/odd/kernel.cpp", correct=True, examples=3)
    odd.observations["threads"] = "a|b\nc"
    header = {"run_dir": "/runs/r", "created_at": "t0", "finished_at": "t1", "machine": {}}
    return build_state([base, odd], header)


def _rows(lines: list[str], header: str) -> dict[str, str]:
    """branch -> its cell under `header` in the first table of `lines`."""
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("| branch"))
    split = [[cell.strip() for cell in line.strip()[1:-1].split(" | ")] for line in lines[start:]
             if line.lstrip().startswith("|") and not line.lstrip().startswith("|-")]
    at = split[0].index(header)
    return {row[0].rstrip("*"): row[at] for row in split[1:]}


def test_an_added_column_shows_in_summary_md_and_the_terminal_after_the_built_in_ones() -> None:
    threads = Column("threads", lambda _name, branch: (branch.get("observations") or {}).get("threads"))
    columns = with_added([threads])
    summary = render_summary(_state(), columns).splitlines()
    header = next(line for line in summary if line.startswith("| branch"))
    assert [cell.strip() for cell in header.strip("|").split("|")][-2:] == ["ISA", "threads"]
    assert _rows(summary, "threads") == {"baseline": "8", "odd": r"a\|b c"}  # free text escaped, on one line
    assert _rows(terminal_lines(_state(), columns), "threads")["baseline"] == "8"
    assert "threads" not in render_summary(_state())


def test_a_column_renders_its_value_its_own_way() -> None:
    doubled = Column("2x threads", lambda _name, branch: (branch.get("observations") or {}).get("threads"),
                     lambda value, _text: f"{2 * value}" if isinstance(value, int) else "n/a")
    assert _rows(render_summary(_state(), with_added([doubled])).splitlines(), "2x threads") == {
        "baseline": "16", "odd": "n/a"}


@pytest.mark.parametrize(("added", "says"), [
    ([Column("GB/s", lambda _n, _b: 1)], "'GB/s' is empty or already taken"),
    ([Column("x", lambda _n, _b: 1), Column("x", lambda _n, _b: 2)], "'x' is empty or already taken"),
    ([Column("", lambda _n, _b: 1)], "'' is empty or already taken"),
    (["threads"], "returned 'threads' (str), not a pytest_dcuopt.report.columns.Column"),
])
def test_an_added_column_that_cannot_be_a_column_of_its_own_is_refused(added: list[object], says: str) -> None:
    with pytest.raises(DcuOptError, match=says.replace("(", r"\(").replace(")", r"\)")):
        with_added(added)
