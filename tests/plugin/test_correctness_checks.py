"""What the correctness checks catch and refuse, end to end: in/out buffers judged against their values before the
call, an output read before it is written, dims above the default, a branch that is sometimes wrong, tolerances that are
not numbers, throughput functions given only their dims, a Python kernel writing past its output.

These tests depend only on the plugin's external behaviour: pytest runs in a subprocess (pytester), the
state.json / summary.md they write, and their terminal output. Nothing is imported from pytest_dcuopt.
The fixture cases are in tests/data/cases (see its README.md).
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import CASES, FAST
from tests.plugin.run_results import branches, failure_section, state_of


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


def test_throughput_passes_each_function_only_the_dims_it_declares(run_plugin, pytester: pytest.Pytester) -> None:
    """dims.json {"N": 1000, "alpha": 2.0} with flops(N) / bytes_moved(N): no TypeError, throughput reported."""
    result = run_plugin(CASES / "extra_float_dim", args=("-k", "benchmark"))
    result.assert_outcomes(passed=1, deselected=1)
    record = branches(state_of(pytester), "extra_float_dim")["baseline"]
    assert record["throughput"]["gbps"] > 0
    assert record["throughput"]["gflops"] > 0


def test_python_kernel_writing_past_its_output_fails(run_plugin, pytester: pytest.Pytester) -> None:
    """The python toolchain guards outputs as the C ABI toolchains do: a write one element past y is caught."""
    result = run_plugin(CASES / "python_overrun", args=("--dcuopt-toolchain=python", "-k", "correctness",
                                                        "--dcuopt-examples=5"))
    result.assert_outcomes(failed=1, deselected=1)
    result.stdout.fnmatch_lines(["*wrote past the end*"])
    record = branches(state_of(pytester), "python_overrun", "python")["baseline"]
    assert record["correct"] is False
    assert re.search(r"wrote past the end.*\by\b", record["failure"]["message"]), record["failure"]["message"]
