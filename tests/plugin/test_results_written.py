"""What a run writes: no .dcuopt folder without a kernel case, state.json when every test is deselected, a reproduce
command that runs without an activated venv, no "beats noise" for a branch never timed, files with the umask's mode.

These tests depend only on the plugin's external behaviour: pytest runs in a subprocess (pytester), the
state.json / summary.md they write, and their terminal output. Nothing is imported from pytest_dcuopt.
The fixture cases are in tests/data/cases (see its README.md).
"""
from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys

import pytest

from tests.conftest import CASES
from tests.plugin.run_results import branches, state_of, table_cell


def test_a_project_without_kernel_cases_gets_no_dcuopt_directory(pytester: pytest.Pytester) -> None:
    """Having the plugin installed must not litter every project it runs in with `.dcuopt/build-cache/`."""
    pytester.makepyfile(test_x="def test_x():\n    assert True\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert not (pytester.path / ".dcuopt").exists(), sorted(str(p) for p in (pytester.path / ".dcuopt").rglob("*"))


def test_state_is_written_when_every_test_is_deselected(run_plugin, pytester: pytest.Pytester) -> None:
    """A session that collected a kernel case but ran none of its tests still writes state.json (with no cases)."""
    result = run_plugin(CASES / "signature_edge", args=("-k", "no_such_test"))
    result.assert_outcomes(deselected=4)
    state_path = pytester.path / "run" / "state.json"
    assert state_path.is_file()
    assert json.loads(state_path.read_text())["cases"] == {}


def test_the_reproduce_command_runs_without_an_activated_venv(run_plugin, pytester: pytest.Pytester) -> None:
    """The printed `reproduce:` command starts with this interpreter's `-m pytest`, so it works as printed with a
    PATH that has no venv (and no `pytest`) on it."""
    result = run_plugin(CASES / "unwritten", args=("-k", "correctness and skips_last"))
    result.assert_outcomes(failed=1, deselected=3)
    result.stdout.fnmatch_lines(["*reproduce: *python* -m pytest '*"])
    line = next(line for line in result.stdout.lines if "reproduce: " in line)
    command = line.split("reproduce: ", 1)[1].strip()
    interpreter = re.match(r"(\S+) -m pytest '", command)
    assert interpreter is not None, command
    assert os.path.isabs(interpreter.group(1).strip("'\"")), command
    assert os.path.samefile(interpreter.group(1).strip("'\""), sys.executable), command

    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    env["PATH"] = "/usr/bin:/bin"  # no venv, no `pytest` executable
    replay = subprocess.run(command, shell=True, cwd=pytester.path, env=env, capture_output=True, text=True,
                            timeout=300)
    assert replay.returncode == 1, replay.stdout[-3000:] + replay.stderr[-3000:]
    assert "skips_last is wrong for dims=" in replay.stdout, replay.stdout[-3000:]


def test_beats_noise_is_blank_for_a_branch_that_was_never_timed(run_plugin, pytester: pytest.Pytester) -> None:
    """A branch that failed correctness (so was never timed) shows `-` under `beats noise`, not `no`."""
    result = run_plugin(CASES / "unwritten")
    result.assert_outcomes(passed=2, failed=1, skipped=1)
    assert branches(state_of(pytester), "unwritten")["skips_last"]["timing"] is None
    terminal = result.stdout.lines
    table = terminal[next(i for i, line in enumerate(terminal) if "dcuopt: branches per case" in line):]
    assert table_cell(table, "skips_last", "beats noise") == "-"
    summary = (pytester.path / "run" / "summary.md").read_text().splitlines()
    assert table_cell(summary, "skips_last", "beats noise") == "-"


def test_state_and_summary_get_the_umask_mode(run_plugin, pytester: pytest.Pytester) -> None:
    """state.json and summary.md are ordinary files (0644 under umask 022), not 0600 temporary files."""
    previous = os.umask(0o022)
    try:
        run_plugin(CASES / "signature_edge", args=("-k", "correctness")).assert_outcomes(passed=2, deselected=2)
    finally:
        os.umask(previous)
    for name in ("state.json", "summary.md"):
        mode = stat.S_IMODE((pytester.path / "run" / name).stat().st_mode)
        assert mode == 0o644, f"{name}: {oct(mode)}"


COLUMN_CONFTEST = '''
from pytest_dcuopt.report.columns import Column

def pytest_dcuopt_update_branch_record(record, config):
    record.observations["source_kind"] = record.source.rsplit(".", 1)[-1]

def pytest_dcuopt_summary_columns(config):
    return [Column("source kind", lambda name, branch: branch["observations"].get("source_kind"))]
'''


def test_a_conftest_adds_a_column_to_summary_md_and_the_terminal_table(run_plugin, pytester: pytest.Pytester) -> None:
    """A column declared by a conftest (`pytest_dcuopt_summary_columns`) follows the built-in ones in both tables."""
    pytester.makeconftest(COLUMN_CONFTEST)
    result = run_plugin(CASES / "signature_edge", args=("-k", "correctness"))
    result.assert_outcomes(passed=2, deselected=2)
    summary = (pytester.path / "run" / "summary.md").read_text().splitlines()
    header = next(line for line in summary if line.startswith("| branch"))
    assert [cell.strip() for cell in header.strip("|").split("|")][-2:] == ["ISA", "source kind"]
    assert table_cell(summary, "baseline", "source kind") == "cpp"
    terminal = result.stdout.lines
    table = terminal[next(i for i, line in enumerate(terminal) if "dcuopt: branches per case" in line):]
    assert table_cell(table, "baseline", "source kind") == "cpp"


def test_a_column_that_cannot_be_added_fails_the_run_and_the_tables_keep_the_built_in_ones(
        run_plugin, pytester: pytest.Pytester) -> None:
    """A hook's column whose header is taken: the run fails naming it; summary.md is still written, built-in only."""
    pytester.makeconftest(COLUMN_CONFTEST.replace('Column("source kind"', 'Column("GB/s"'))
    result = run_plugin(CASES / "signature_edge", args=("-k", "correctness"))
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR
    result.stdout.fnmatch_lines(["*pytest_dcuopt_summary_columns: DcuOptError: *'GB/s' is empty or already taken*"])
    summary = (pytester.path / "run" / "summary.md").read_text().splitlines()
    header = next(line for line in summary if line.startswith("| branch"))
    assert [cell.strip() for cell in header.strip("|").split("|")][-1] == "ISA" and header.count("GB/s") == 1
