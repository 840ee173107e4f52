"""Regression tests for results a CI must be able to trust (each was a reproduced bug).

These tests depend only on the plugin's external behaviour: pytest runs in a subprocess (pytester), the
state.json / summary.md they write, and their terminal output. Nothing is imported from pytest_dcuopt.
The fixture cases are in tests/data/cases (see its README.md).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CASES, FAST


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


# a ------------------------------------------------------------------------------------------------------------------
def test_inout_buffers_are_checked_against_the_values_before_the_call(run_plugin, pytester: pytest.Pytester) -> None:
    """An in/out buffer (a non-const pointer declared in `inputs`) must reach the reference with the data the
    kernel started from, not with what the kernel wrote into it: correct in/out and in-place kernels pass."""
    result = run_plugin(CASES / "inout_axpy", CASES / "inplace_reverse", CASES / "hist_accumulate",
                        args=("-k", "correctness", "--dcuopt-examples=10"))
    result.assert_outcomes(passed=4, deselected=4)
    state = state_of(pytester)
    for case, branch in (("inout_axpy", "baseline"), ("inout_axpy", "omp_simd"), ("inplace_reverse", "baseline"),
                         ("hist_accumulate", "baseline")):
        record = branches(state, case)[branch]
        assert record["correct"] is True and record["failure"] is None, (case, branch, record["failure"])


# b ------------------------------------------------------------------------------------------------------------------
def test_reading_an_output_before_writing_it_names_the_fix(run_plugin, pytester: pytest.Pytester) -> None:
    """`y[i] += x[i]` with y not in `inputs` reads the NaN poison: the failure must name y as read before written
    and suggest declaring it in `inputs` (which makes it an in/out buffer)."""
    result = run_plugin(CASES / "reads_output", args=("-k", "correctness", "--dcuopt-examples=5"))
    result.assert_outcomes(passed=1, failed=1, deselected=2)
    record = branches(state_of(pytester), "reads_output")["accumulates"]
    assert record["correct"] is False and record["failure"] is not None
    for text in (record["failure"]["message"], failure_section(result, "test_correctness_cpu[accumulates]")):
        assert "declare" in text.lower(), text
        assert "inputs" in text, text
        assert re.search(r"""['"`]y['"`]""", text), text


# c ------------------------------------------------------------------------------------------------------------------
def test_dims_above_the_default_are_always_checked(run_plugin, pytester: pytest.Pytester) -> None:
    """A kernel whose "launch grid" only covers the default N = 4096 must fail deterministically, not only when
    Hypothesis happens to draw N > 4096; the record lists the deterministic examples that ran."""
    result = run_plugin(CASES / "fixed_grid", args=("-k", "correctness", "--dcuopt-examples=1"))
    result.assert_outcomes(passed=1, failed=1, deselected=2)
    found = branches(state_of(pytester), "fixed_grid")
    grid = found["grid_4096"]
    assert grid["correct"] is False and grid["failure"]["dims"]["N"] > 4096
    base = found["baseline"]
    assert base["correct"] is True
    examples_run = base.get("examples_run")
    assert isinstance(examples_run, list), f"no `examples_run` list in the baseline's record: {sorted(base)}"
    assert {"N": 16384} in examples_run  # the top of dim_ranges
    assert {"N": 4097} in examples_run  # the default + 1
    assert base["examples"] >= len(examples_run)


# d ------------------------------------------------------------------------------------------------------------------
def test_a_sometimes_wrong_branch_fails_and_is_never_timed_or_crowned(run_plugin, pytester: pytest.Pytester) -> None:
    """A kernel that is wrong on every 4th call fails correctness as nondeterministic (flaky): it is recorded as
    incorrect with its failure, not benchmarked, and not champion."""
    result = run_plugin(CASES / "sometimes_wrong")
    result.assert_outcomes(passed=2, failed=1, skipped=1)
    state = state_of(pytester)
    record = branches(state, "sometimes_wrong")["every_fourth_call"]
    assert record["correct"] is False
    assert record["failure"] is not None
    assert re.search(r"nondetermin|flaky", record["failure"]["message"], re.IGNORECASE), record["failure"]["message"]
    assert record["timing"] is None
    assert record["champion"] is False
    assert state["cases"]["sometimes_wrong"]["toolchains"]["cpu"]["champion"] == "baseline"


# e ------------------------------------------------------------------------------------------------------------------
def test_xdist_keeps_failures_and_toolchains_and_agrees_with_a_serial_run(pytester: pytest.Pytester,
                                                                         shared_build_cache: Path) -> None:
    """Under -n 2 a branch that failed correctness stays `correct: false` (never null) in the merged state.json and
    is never champion, `toolchains` is filled in, and correct / failure / champion match a -n 0 run."""
    parallel = run_cases(pytester, shared_build_cache, CASES / "xdist_merge", run_dir="run_n2", args=("-n", "2"))
    assert parallel.ret == 1
    state2 = state_of(pytester, "run_n2")
    drops_tail = branches(state2, "xdist_merge")["drops_tail"]
    assert drops_tail["correct"] is False
    assert drops_tail["failure"] is not None
    assert drops_tail["champion"] is False
    assert state2["toolchains"] != {}
    assert state2["toolchains"]["cpu"]["capability"] == "run"

    serial = run_cases(pytester, shared_build_cache, CASES / "xdist_merge", run_dir="run_n0", args=("-n", "0"))
    serial.assert_outcomes(passed=2, failed=1, skipped=1)
    state0 = state_of(pytester, "run_n0")
    found0, found2 = branches(state0, "xdist_merge"), branches(state2, "xdist_merge")
    assert set(found0) == set(found2) == {"baseline", "drops_tail"}
    for name in found0:
        for field in ("correct", "champion"):
            assert found2[name][field] == found0[name][field], (name, field)
        assert (found2[name]["failure"] is None) == (found0[name]["failure"] is None), name
    assert (state2["cases"]["xdist_merge"]["toolchains"]["cpu"]["champion"]
            == state0["cases"]["xdist_merge"]["toolchains"]["cpu"]["champion"] == "baseline")
    assert {k: v["capability"] for k, v in state2["toolchains"].items()} == \
        {k: v["capability"] for k, v in state0["toolchains"].items()}


# f ------------------------------------------------------------------------------------------------------------------
def test_runs_without_xdist(run_plugin) -> None:
    """`-p no:xdist` must not end in INTERNALERROR (the plugin's xdist hooks must be optional)."""
    result = run_plugin(CASES / "signature_edge", args=("-p", "no:xdist", "-k", "correctness"))
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    result.assert_outcomes(passed=2, deselected=2)


# g ------------------------------------------------------------------------------------------------------------------
def test_a_project_without_kernel_cases_gets_no_dcuopt_directory(pytester: pytest.Pytester) -> None:
    """Having the plugin installed must not litter every project it runs in with `.dcuopt/build-cache/`."""
    pytester.makepyfile(test_x="def test_x():\n    assert True\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert not (pytester.path / ".dcuopt").exists(), sorted(str(p) for p in (pytester.path / ".dcuopt").rglob("*"))


# h ------------------------------------------------------------------------------------------------------------------
def test_state_is_written_when_every_test_is_deselected(run_plugin, pytester: pytest.Pytester) -> None:
    """A session that collected a kernel case but ran none of its tests still writes state.json (with no cases)."""
    result = run_plugin(CASES / "signature_edge", args=("-k", "no_such_test"))
    result.assert_outcomes(deselected=4)
    state_path = pytester.path / "run" / "state.json"
    assert state_path.is_file()
    assert json.loads(state_path.read_text())["cases"] == {}


# i ------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("name", "expression", "shown"), [("atol", 'float("nan")', "nan"),
                                                           ("rtol", 'float("inf")', "inf")], ids=["abs", "rel"])
def test_tolerances_that_are_not_numbers_or_unbounded_are_refused(pytester: pytest.Pytester, shared_build_cache: Path,
                                                                  name: str, expression: str, shown: str) -> None:
    """`atol = nan` makes every comparison fail and `rtol = inf` makes every comparison pass: both are refused with
    an error that names the setting and its value."""
    case = pytester.path / "tolerance"
    case.mkdir()
    (case / "ref.py").write_text(f'shapes = {{"x": ("N",), "y": ("N",)}}\n{name} = {expression}\n\n\n'
                                 "def reference(x, y, N):\n    y.copy_(x)\n")
    (case / "dims.json").write_text('{"N": 64}')
    (case / "kernel.cpp").write_text(
        'extern "C" void solve(const float* x, float* y, int N) { for (int i = 0; i < N; ++i) y[i] = x[i]; }\n')
    result = pytester.runpytest_subprocess("tolerance", f"--dcuopt-cache-dir={shared_build_cache}", *FAST,
                                           "--dcuopt-run-dir=run", "-k", "correctness or contract")
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) == 0 and outcomes.get("failed", 0) >= 1, outcomes
    named = [line for line in result.stdout.lines
             if re.search(rf"\b{name}\b.*\b{shown}\b", line) and not line.startswith(("rootdir:", "running:", "in:"))]
    assert named, f"no line names {name} and {shown}:\n" + result.stdout.str()
    result.stdout.no_fnmatch_line("*is wrong for dims*")  # refused up front, not reported as a wrong kernel


# j ------------------------------------------------------------------------------------------------------------------
def test_throughput_passes_each_function_only_the_dims_it_declares(run_plugin, pytester: pytest.Pytester) -> None:
    """dims.json {"N": 1000, "alpha": 2.0} with flops(N) / bytes_moved(N): no TypeError, throughput reported."""
    result = run_plugin(CASES / "extra_float_dim", args=("-k", "benchmark"))
    result.assert_outcomes(passed=1, deselected=1)
    record = branches(state_of(pytester), "extra_float_dim")["baseline"]
    assert record["throughput"]["gbps"] > 0
    assert record["throughput"]["gflops"] > 0


# k ------------------------------------------------------------------------------------------------------------------
def test_python_kernel_writing_past_its_output_fails(run_plugin, pytester: pytest.Pytester) -> None:
    """The python toolchain guards outputs as the C ABI toolchains do: a write one element past y is caught."""
    result = run_plugin(CASES / "python_overrun", args=("--dcuopt-toolchain=python", "-k", "correctness",
                                                        "--dcuopt-examples=5"))
    result.assert_outcomes(failed=1, deselected=1)
    result.stdout.fnmatch_lines(["*wrote past the end*"])
    record = branches(state_of(pytester), "python_overrun", "python")["baseline"]
    assert record["correct"] is False
    assert re.search(r"wrote past the end.*\by\b", record["failure"]["message"]), record["failure"]["message"]


# l ------------------------------------------------------------------------------------------------------------------
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


# m ------------------------------------------------------------------------------------------------------------------
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


# n ------------------------------------------------------------------------------------------------------------------
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
