"""Results that reach people intact: Markdown that names and messages cannot break, and reproduce commands that run
as printed in a real shell (the `latest` link: tests/unit/test_files_latest.py)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_dcuopt.check.compare import reproduce_command
from pytest_dcuopt.report.markdown import md_code, md_fence
from pytest_dcuopt.report.state import BranchRecord, build_state
from pytest_dcuopt.report.summary import render_summary, terminal_lines
from pytest_dcuopt.timing.policy import TimingPolicy, summarize

TRIPLE = "```"


def header(reason: str = "g++") -> dict[str, Any]:
    return {"tool": {"name": "pytest_dcuopt", "version": "0"}, "created_at": "t0", "finished_at": "t1",
            "run_dir": "/r`un", "exit_status": 1, "machine": {"cpu": "x", "host": "h"},
            "options": {"timing": TimingPolicy().to_json(), "interleave_rounds": 4},
            "toolchains": {"cpu": {"capability": "run", "reason": reason}}}


def timed(branch: str, ms: float) -> BranchRecord:
    record = BranchRecord("case", "cpu", branch, f"{branch}.cpp", correct=True, examples=3)
    record.timing = {**summarize([ms / 1e3] * 12).to_json(), "mode": "cold", "timer": "host"}
    return record


def hostile_state() -> dict[str, Any]:
    """Names, messages and commands with table pipes, backtick runs and newlines, as kernels and users write them."""
    failure = {"dims": {"N": 3}, "seed": 0,
               "message": f"wrong at 2\n{TRIPLE}\nnot the end of the block | still the message\n",
               "reproduce": "python -m pytest 'case/ref.py::test_correctness_cpu[a|b]' --dcuopt-seed=0"}
    wrong = BranchRecord("case", "cpu", "a|b", "branches/a|b/kernel.cpp", correct=False, failure=failure)
    errored = BranchRecord("case", "cpu", "tick`s\nnewline", "t.cpp",
                           error={"kind": "case error", "message": f"````\nfour ticks | and a pipe\n{TRIPLE}"})
    skipped = BranchRecord("case", "cpu", "s*kip", "s.cpp", skipped="not benchmarked: `x` | y\nz")
    return build_state([timed("baseline", 2.0), wrong, errored, skipped], header("g++ | 12\n(`odd`)"))


def unescaped_pipes(line: str) -> int:
    return len(re.findall(r"(?<!\\)\|", line))


def test_table_rows_keep_their_columns_whatever_the_branch_name() -> None:
    lines = render_summary(hostile_state()).splitlines()
    table = [line for line in lines if line.startswith("| branch")]
    assert len(table) == 1
    start = lines.index(table[0])
    rows = [line for line in lines[start:] if line.startswith("|")][:6]
    assert len(rows) == 2 + 4, rows  # header, rule, one row per branch: the newline did not split a row
    assert {unescaped_pipes(row) for row in rows} == {unescaped_pipes(table[0])}, rows
    assert any(row.startswith("| a\\|b ") for row in rows)
    assert any("tick\\`s newline" in row for row in rows)


def fenced_blocks(lines: list[str]) -> list[tuple[str, list[str]]]:
    """(fence, body) of each fenced block, read as CommonMark does: closed by a line of at least as many backticks."""
    blocks, index = [], 0
    while index < len(lines):
        opening = re.fullmatch(r"(`{3,})", lines[index])
        if opening is None:
            index += 1
            continue
        fence = opening.group(1)
        end = next(i for i in range(index + 1, len(lines)) if re.fullmatch(f"`{{{len(fence)},}}", lines[i]))
        blocks.append((fence, lines[index + 1:end]))
        index = end + 1
    return blocks


def test_a_message_holding_triple_backticks_stays_inside_its_block() -> None:
    lines = render_summary(hostile_state()).splitlines()
    bodies = ["\n".join(body) for _, body in fenced_blocks(lines)]
    assert any(TRIPLE in body and "not the end of the block | still the message" in body for body in bodies), bodies
    assert any("````\nfour ticks | and a pipe\n```" in body for body in bodies), bodies


def test_the_reproduce_command_is_one_code_span_with_its_pipe() -> None:
    summary = render_summary(hostile_state())
    line = next(line for line in summary.splitlines() if line.startswith("Reproduce:"))
    assert line == "Reproduce: `python -m pytest 'case/ref.py::test_correctness_cpu[a|b]' --dcuopt-seed=0`"


def test_inline_text_cannot_open_code_spans_or_lists() -> None:
    summary = render_summary(hostile_state())
    assert "- `cpu`: run: g++ \\| 12 (\\`odd\\`)" in summary
    assert "**s\\*kip** skipped: not benchmarked: \\`x\\` \\| y z" in summary
    assert "- run dir: ``/r`un``" in summary


def test_code_spans_and_fences_outgrow_the_backticks_inside() -> None:
    assert md_code("a`b") == "``a`b``"
    assert md_code("`start") == "`` `start ``"
    assert md_fence("x\n````\ny") == ["`````", "x\n````\ny", "`````"]


def test_the_terminal_table_keeps_one_line_per_branch() -> None:
    lines = terminal_lines(hostile_state())
    rows = [line for line in lines if line.lstrip().startswith("|")]
    assert len(rows) == 2 + 4
    assert any("tick`s\\nnewline" in row for row in rows)


# ----- reproduce commands run as printed -----------------------------------------------------------------------------
HOSTILE_NODEIDS = [
    "it's a case/ref.py::test_correctness_cpu[x'$(touch PWNED)']",
    "case/ref.py::test_correctness_cpu[`touch PWNED`]",
    "case/ref.py::test_correctness_cpu[a b;touch PWNED]",
    'case/ref.py::test_correctness_cpu["$HOME"\\]',
    "case/ref.py::test_correctness_cpu[line\nbreak]",
]


@pytest.mark.parametrize("nodeid", HOSTILE_NODEIDS)
def test_a_printed_reproduce_command_runs_in_bash_exactly_as_meant(tmp_path: Path, nodeid: str) -> None:
    """Pasted into bash, the command must run pytest on exactly that node id and run nothing else."""
    command = reproduce_command(nodeid, {"N": 13}, 7, extra=("-p", "no:cacheprovider", "--co", "-k", "x or y"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    result = subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True, env=env,
                            timeout=120)
    assert not (tmp_path / "PWNED").exists(), "the command ran something the node id held"
    assert result.returncode == 4, result.stdout + result.stderr  # usage error: no such test file here
    file_part = nodeid.split("::")[0]
    assert f"file or directory not found: {file_part}" in result.stdout + result.stderr
    program = command.split(" -m pytest ", 1)[0]
    echoed = subprocess.run(["bash", "-c", command.replace(f"{program} -m pytest", "printf '%s\\0'", 1)],
                            cwd=tmp_path, capture_output=True, text=True, check=True).stdout.split("\0")[:-1]
    assert echoed == [nodeid, '--dcuopt-dims={"N":13}', "--dcuopt-seed=7", "-p", "no:cacheprovider", "--co", "-k",
                      "x or y"]  # every word arrives whole, as meant


def test_a_reproduce_command_quotes_extra_arguments_too() -> None:
    command = reproduce_command("t.py::t", None, None, extra=("-k", "a and not b"))
    assert command.endswith("'-k' 'a and not b'")
    assert command.startswith(f"'{sys.executable}' -m pytest 't.py::t'")
