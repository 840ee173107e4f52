"""Reading what a pytester run of the plugin left: state.json, its branches, the terminal's tables and failures."""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FAST


def state_of(pytester: pytest.Pytester, run_dir: str = "run") -> dict[str, Any]:
    return json.loads((pytester.path / run_dir / "state.json").read_text())


def branches(state: dict[str, Any], case: str, toolchain: str = "cpu") -> dict[str, Any]:
    return state["cases"][case]["toolchains"][toolchain]["branches"]


def run_cases(pytester: pytest.Pytester, cache: Path, *cases: Path, run_dir: str = "run",
              args: tuple[str, ...] = ()) -> pytest.RunResult:
    """Like the `run_plugin` fixture, but may be called more than once per test (other run dirs)."""
    for case in cases:
        if not (pytester.path / case.name).exists():
            shutil.copytree(case, pytester.path / case.name)
    return pytester.runpytest_subprocess(*[c.name for c in cases], f"--dcuopt-cache-dir={cache}",
                                         f"--dcuopt-run-dir={pytester.path / run_dir}", *FAST, *args)


def table_cell(lines: list[str], branch: str, column: str) -> str:
    """The `column` cell of `branch`'s row in the first branch table found in `lines` (terminal or summary.md)."""
    header = next(line for line in lines if line.strip().startswith("|") and column in line)
    names = [cell.strip() for cell in header.strip().strip("|").split("|")]
    start = lines.index(header)
    for line in lines[start + 2:]:
        if not line.strip().startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if cells[0].rstrip("*") == branch:
            return cells[names.index(column)]
    raise AssertionError(f"no row for branch {branch!r} in the table under {header!r}")


def failure_section(result: pytest.RunResult, test_id: str) -> str:
    """The text pytest printed under `____ <test_id> ____` in FAILURES."""
    lines = result.stdout.lines
    start = next(i for i, line in enumerate(lines) if line.startswith("_") and f" {test_id} " in line)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith(("___", "==="))), len(lines))
    return "\n".join(lines[start + 1:end])
