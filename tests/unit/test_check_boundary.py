"""The correctness stage's deterministic parts: boundary dims, the reproduce command, failure messages."""
from __future__ import annotations

import shlex
import subprocess
import sys

import numpy as np
import pytest

from pytest_dcuopt.check.checked_calls import read_before_write_hint
from pytest_dcuopt.check.compare import compare, reproduce_command
from pytest_dcuopt.check.correctness import describe_exception, is_flaky
from pytest_dcuopt.check.example_dims import MAX_BOUNDARY_EXAMPLES, boundary_dims, boundary_values


# ----- boundary dims ----------------------------------------------------------------------------------------------
def test_a_fixed_grid_sized_for_the_default_meets_the_dims_above_it() -> None:
    """tests/data/cases/fixed_grid: N = 4096 by default, dim_ranges N in [1, 16384]."""
    assert boundary_dims({"N": 4096}, {"N": (1, 16384)}) == [
        {"N": 4096},  # the defaults first
        {"N": 16384}, {"N": 16383},  # the top of the range and one below it
        {"N": 4097},  # default + 1
        {"N": 2049}, {"N": 8193},  # just past the powers of two near the default (4097 is already there)
        {"N": 1},  # the bottom
    ]


def test_values_outside_the_range_are_dropped() -> None:
    # Default 256 in [1, 300]: 512 + 1 is out of range, 256 + 1 is default + 1.
    assert boundary_values(256, 1, 300) == [300, 299, 257, 129, 1]
    # A default above the whole range (kernels/matmul): only the range's own boundaries remain.
    assert boundary_values(320, 1, 70) == [70, 69, 1]


def test_multiple_of_is_respected() -> None:
    values = boundary_values(64, 8, 130, 8)
    assert values == [128, 120, 72, 40, 8]
    assert all(v % 8 == 0 and 8 <= v <= 130 for v in values)


def test_several_dims_vary_one_at_a_time_then_all_at_their_top() -> None:
    examples = boundary_dims({"M": 16, "K": 16, "alpha": 2.0}, {"M": (1, 24), "K": (1, 20)})
    assert examples[0] == {"M": 16, "K": 16, "alpha": 2.0}
    assert examples[-1] == {"M": 24, "K": 20, "alpha": 2.0}  # the all-max combination
    for dims in examples[1:-1]:  # every other example differs from the defaults in exactly one dim
        assert sum(dims[d] != 16 for d in ("M", "K")) == 1 and dims["alpha"] == 2.0
    assert {"M": 17, "K": 16, "alpha": 2.0} in examples and {"M": 16, "K": 1, "alpha": 2.0} in examples
    assert len(examples) == len({tuple(sorted(d.items())) for d in examples})  # no duplicates


def test_many_dims_are_capped_fairly() -> None:
    defaults = {f"D{i}": 100 for i in range(8)}
    examples = boundary_dims(defaults, {d: (1, 1000) for d in defaults})
    assert len(examples) == MAX_BOUNDARY_EXAMPLES
    assert examples[0] == defaults and examples[-1] == {d: 1000 for d in defaults}
    for dim in defaults:  # every dim still reaches its top and its bottom
        assert {**defaults, dim: 1000} in examples and {**defaults, dim: 1} in examples


def test_no_ranged_dims_means_only_the_defaults() -> None:
    assert boundary_dims({"alpha": 0.5}, {}) == [{"alpha": 0.5}]


# ----- reproduce command ------------------------------------------------------------------------------------------
def test_the_reproduce_command_uses_this_interpreter_and_survives_the_shell() -> None:
    nodeid = "it's/ref.py::test_correctness_cpu[b 1]"
    command = reproduce_command(nodeid, {"N": 13}, 7)
    words = shlex.split(command)
    assert words[:4] == [sys.executable, "-m", "pytest", nodeid]
    assert words[4:] == ['--dcuopt-dims={"N":13}', "--dcuopt-seed=7"]
    echoed = subprocess.run(["sh", "-c", "printf '%s\\n' " + command.split(" ", 1)[1]], capture_output=True,
                            text=True, check=True).stdout.splitlines()
    assert echoed == words[1:]  # what a POSIX shell passes on is exactly what was meant


def test_a_bare_reproduce_command_names_only_the_test() -> None:
    assert shlex.split(reproduce_command("a/ref.py::t[x]")) == [sys.executable, "-m", "pytest", "a/ref.py::t[x]"]


# ----- failure messages -------------------------------------------------------------------------------------------
def nan_output(name: str = "y") -> object:
    reference = np.arange(4, dtype=np.float64)
    kernel = reference.copy()
    kernel[1:3] = np.nan
    found = compare(name, kernel, reference, "float32", (4,), 1e-4, 1e-3)
    assert found is not None
    return found


def test_a_nan_pure_output_suggests_declaring_it_in_inputs() -> None:
    hint = read_before_write_hint(nan_output(), {"x": object()})  # type: ignore[arg-type]
    assert hint is not None
    assert hint.startswith("`y` came out NaN/unwritten in 2 of 4 elements")
    assert "declare it in ref.py `inputs`" in hint


def test_no_hint_for_an_inout_buffer_or_a_written_output() -> None:
    assert read_before_write_hint(nan_output(), {"y": object()}) is None  # type: ignore[arg-type]
    wrong = compare("y", np.ones(4), np.zeros(4), "float32", (4,), 1e-4, 1e-3)
    assert wrong is not None and read_before_write_hint(wrong, {}) is None


def test_a_real_hypothesis_flaky_failure_is_recognised_and_described() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    calls = []

    @settings(max_examples=5, database=None, deadline=None)
    @given(st.integers(0, 3))
    def wrong_only_on_the_first_call(n: int) -> None:
        calls.append(n)
        assert len(calls) > 1, "first call wrong"

    with pytest.raises(Exception) as raised:  # which Hypothesis class is the point of the test
        wrong_only_on_the_first_call()
    assert is_flaky(raised.value), type(raised.value)
    text = describe_exception(raised.value)
    assert "flaky, nondeterministic" in text
    assert "first call wrong" in text  # the sub-exception's message is kept
    assert not is_flaky(AssertionError("plainly wrong"))
