"""`latest` names the newest complete run: a one-test reproduce run or a -k run leaves it where it was, says so, and
records why it is partial; `--dcuopt-compare=latest` then gates against the complete run, and naming the partial
run as a baseline is refused."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import CASES, FAST

CASE = CASES / "python_scale"


def state_path(result: pytest.RunResult) -> Path:
    (line,) = [line for line in result.outlines if line.startswith("state: ")]
    return Path(line.removeprefix("state: "))


def test_only_a_complete_run_moves_latest_and_a_partial_one_is_no_baseline(pytester: pytest.Pytester,
                                                                            shared_build_cache: Path) -> None:
    shutil.copytree(CASE, pytester.path / CASE.name)
    common = (f"--dcuopt-cache-dir={shared_build_cache}", *FAST)
    latest = pytester.path / ".dcuopt" / "runs" / "latest"

    complete = pytester.runpytest_subprocess(CASE.name, *common)
    complete.assert_outcomes(passed=2)
    first = state_path(complete)
    assert latest.resolve() == first.parent.resolve()
    assert json.loads(first.read_text())["scope"] == {"complete": True, "partial_because": [], "selection": [],
                                                      "workers": 0}

    reproduce = pytester.runpytest_subprocess(f"{CASE.name}/ref.py::test_correctness_python[baseline]", *common)
    reproduce.assert_outcomes(passed=1)
    partial = state_path(reproduce)
    assert latest.resolve() == first.parent.resolve()  # left at the complete run
    assert ("latest: left as it was: this run is partial (test ids named on the command line "
            "(python_scale/ref.py::test_correctness_python[baseline]))") in reproduce.stdout.str()
    assert json.loads(partial.read_text())["scope"]["complete"] is False

    refused = pytester.runpytest_subprocess(CASE.name, f"--dcuopt-compare={partial}", *common)
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    refused.stderr.fnmatch_lines([f"*--dcuopt-compare: {partial} is a partial run (test ids named*would pass this "
                                  "gate as NEW*"])

    gated = pytester.runpytest_subprocess(CASE.name, "--dcuopt-compare=latest", "--dcuopt-compare-floor-us=1000000",
                                          *common)
    gated.assert_outcomes(passed=2)
    assert json.loads(state_path(gated).read_text())["gate"]["baseline"] == str(first.resolve())
