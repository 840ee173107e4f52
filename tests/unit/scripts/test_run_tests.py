"""scripts/run-tests.sh: its short summary names what failed, errored and was skipped."""
from __future__ import annotations

import shlex
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "run-tests.sh"


def pytest_command() -> list[str]:
    (line,) = [line for line in SCRIPT.read_text().splitlines() if " -m pytest " in line]
    return shlex.split(line)


def test_the_summary_lists_failures_errors_and_skips() -> None:
    flags = [arg[2:] for arg in pytest_command() if arg.startswith("-r")]
    assert flags, "run-tests.sh passes no -r option: pytest's short summary would list failures only"
    assert {"f", "E", "s"} <= set(flags[-1]), flags
