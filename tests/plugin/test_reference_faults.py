"""A reference that hangs or whose result is NaN where the kernel never writes: the check still decides.

Black-box: pytest runs in a subprocess on the fixture cases tests/data/cases/slow_reference (a reference that
sleeps for ten minutes) and tests/data/cases/nan_reference (y = log(x) on [-1, 1]: NaN where x < 0, and a branch
that never writes those elements).
"""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import CASES, FAST


def run(pytester: pytest.Pytester, cache: Path, case: str, *args: str) -> pytest.RunResult:
    if not (pytester.path / case).exists():
        shutil.copytree(CASES / case, pytester.path / case)
    return pytester.runpytest_subprocess(case, f"--dcuopt-cache-dir={cache}",
                                         f"--dcuopt-run-dir={pytester.path / 'run'}", *FAST, "-k", "correctness",
                                         "--dcuopt-examples=5", *args, timeout=120)


def test_a_reference_that_does_not_return_is_stopped_at_the_timeout(pytester: pytest.Pytester,
                                                                    shared_build_cache: Path) -> None:
    """Every branch of the case fails with it; the reference is not waited for again at the same dims."""
    case = pytester.path / "slow_reference"
    shutil.copytree(CASES / "slow_reference", case)
    (case / "branches" / "same").mkdir(parents=True)
    shutil.copy(case / "kernel.cpp", case / "branches" / "same" / "kernel.cpp")
    result = run(pytester, shared_build_cache, "slow_reference", "--dcuopt-timeout=2")
    output = result.stdout.str()
    result.assert_outcomes(failed=2, deselected=2)
    stopped = (r"slow_reference/ref.py: reference\(\*\*kwargs\) did not return within 2 s \(--dcuopt-timeout\) at "
               r"dims \{'N': 64\}; it was interrupted.*raise --dcuopt-timeout")
    assert re.search(stopped, output, re.S), output
    assert re.search(stopped + r".*\(It was not run again at these dims.\)", output, re.S), output


def test_an_output_never_written_where_the_reference_is_nan_fails(pytester: pytest.Pytester,
                                                                  shared_build_cache: Path) -> None:
    """NaN poison and a NaN reference compare equal; the poison's bits tell the unwritten elements apart, and a
    kernel that writes NaN there itself passes."""
    result = run(pytester, shared_build_cache, "nan_reference")
    output = result.stdout.str()
    result.assert_outcomes(passed=1, failed=1, deselected=2)
    assert re.search(r"FAILED nan_reference/ref.py::test_correctness_cpu\[skips_negative\]", output), output
    assert re.search(r"output 'y' \(float32\): never written where the reference is NaN: \d+ elements still hold the "
                     r"harness's NaN poison", output), output
