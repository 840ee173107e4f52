"""Running the harness: pytest in a subprocess with this interpreter, and what its state.json says."""
from __future__ import annotations

import json
import re
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..external_tools import ToolResult, run_tool
from ..report.state import find_case
from .layout import LoopError

# `-rs` short summary lines: "SKIPPED [1] path:line: reason"
_SKIP_LINE = re.compile(r"^SKIPPED \[\d+\] [^:]+:\d+: (?P<reason>.+)$", re.MULTILINE)
# A whole iteration (builds, Hypothesis, timing of K branches) is minutes at most; a hung run must not hang the loop.
HARNESS_TIMEOUT_S = 3600.0


@dataclass(frozen=True)
class HarnessRun:
    result: ToolResult
    run_dir: Path

    @property
    def state(self) -> dict[str, Any] | None:
        path = self.run_dir / "state.json"
        return json.loads(path.read_text()) if path.is_file() else None

    def output_tail(self, lines: int = 40) -> str:
        text = (self.result.stdout + self.result.stderr).strip().splitlines()
        return "\n".join(text[-lines:])

    def report(self, name: str) -> dict[str, Any] | None:
        path = self.run_dir / name
        return json.loads(path.read_text()) if path.is_file() else None


def run_pytest(targets: Sequence[str], run_dir: Path, extra: Sequence[str], cwd: Path) -> HarnessRun:
    """pytest on `targets`, its run directory emptied first so no result of an earlier run is ever read."""
    if run_dir.exists():
        shutil.rmtree(run_dir)
    command = [sys.executable, "-m", "pytest", *targets, f"--dcuopt-run-dir={run_dir}", "-p", "no:cacheprovider",
               *extra]
    result = run_tool(command, timeout=HARNESS_TIMEOUT_S, cwd=cwd)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "pytest.log").write_text(f"$ {result.command_line}\n(exit {result.returncode})\n\n{result.stdout}\n"
                                        f"{result.stderr}")
    return HarnessRun(result, run_dir)


def skip_reasons(run: HarnessRun) -> list[str]:
    """The skip reasons of pytest's `-rs` summary (pass `-rs` in the run's arguments)."""
    return [m.group("reason").strip() for m in _SKIP_LINE.finditer(run.result.stdout)]


def toolchain_entry(run: HarnessRun, case: str, toolchain: str) -> dict[str, Any]:
    """The harness state's entry of one case on one toolchain, or a LoopError with pytest's own words."""
    state = run.state
    entry = (find_case(state or {}, case) or {}).get("toolchains", {}).get(toolchain)
    if entry is None:
        raise LoopError(f"the harness run wrote no result for case {case!r} on toolchain {toolchain!r} "
                        f"(pytest exit {run.result.returncode}; log: {run.run_dir / 'pytest.log'}). Its last "
                        f"lines:\n{run.output_tail()}")
    return dict(entry)


def branch_problem(record: dict[str, Any]) -> str:
    """Why a branch record is not a correct, timed branch (failure, error or skip), in one line."""
    for key in ("failure", "error"):
        if record.get(key):
            return str(record[key].get("message", record[key])).strip().splitlines()[0][:300]
    if record.get("skipped"):
        return str(record["skipped"])
    if record.get("correct") is None:
        return "its correctness test did not run"
    return "no problem recorded"


def speedup_interval(record: dict[str, Any]) -> list[float] | None:
    """Baseline/branch speedup interval from the interleaved A/B medians' 95% CIs (None when no A/B ran)."""
    ab = (record.get("timing") or {}).get("interleaved")
    if not ab:
        return None
    base_lo, base_hi = ab["baseline_ci95_ms"]
    lo, hi = ab["ci95_ms"]
    return [round(base_lo / hi, 4) if hi > 0 else 0.0, round(base_hi / lo, 4) if lo > 0 else float("inf")]
