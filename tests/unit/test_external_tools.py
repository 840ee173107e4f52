"""`external_tools.run_tool`, the one subprocess wrapper: what it records, its timeout, a missing program."""
from __future__ import annotations

import sys

from pytest_dcuopt.external_tools import run_tool


def test_run_tool_records_the_command_and_output() -> None:
    result = run_tool([sys.executable, "-c", "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)"])
    assert (result.returncode, result.stdout.strip(), result.stderr.strip()) == (3, "out", "err")
    assert result.command_line.startswith(sys.executable) and not result.ok


def test_run_tool_kills_at_the_timeout() -> None:
    result = run_tool([sys.executable, "-c", "import time; time.sleep(30)"], timeout=0.5)
    assert result.timed_out and result.returncode == 124 and result.seconds < 10
    assert "timed out after 0.5 s" in result.stderr


def test_run_tool_reports_a_missing_program() -> None:
    result = run_tool(["dcuopt-no-such-program"])
    assert result.returncode == 127 and not result.ok
