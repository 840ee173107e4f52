"""Where a run's files land, and that nothing is created when there is nothing to record.

Black-box runs of pytest in a subprocess (pytester): the plugin is loaded by its entry point as a user has it.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import CASES, FAST


def copy_case(destination: Path) -> Path:
    shutil.copytree(CASES / "signature_edge", destination)
    return destination


def printed_state_path(result: pytest.RunResult) -> Path:
    line = next(line for line in result.stdout.lines if line.startswith("state: "))
    return Path(line.removeprefix("state: ").strip())


def test_without_a_config_file_results_land_where_pytest_was_run(pytester: pytest.Pytester, shared_build_cache: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """`pytest <elsewhere>/cases/mycase` run from `work/`: pytest's rootdir is the common ancestor of both, but the
    user looks in `work/`, where the run started; the end of the run prints the path."""
    case = copy_case(pytester.path / "elsewhere" / "cases" / "mycase")
    work = pytester.mkdir("work")
    monkeypatch.chdir(work)
    result = pytester.runpytest_subprocess(str(case), f"--dcuopt-cache-dir={shared_build_cache}", *FAST,
                                           "-k", "correctness")
    result.assert_outcomes(passed=2, deselected=2)
    state = printed_state_path(result)
    assert state.is_file(), result.stdout.str()
    assert state.parent.parent == work / ".dcuopt" / "runs", state
    assert (work / ".dcuopt" / "logs").is_dir()  # the worker logs live beside the runs
    assert not (pytester.path / ".dcuopt").exists() and not (case / ".dcuopt").exists()


def test_with_a_config_file_results_land_in_the_rootdir(pytester: pytest.Pytester, shared_build_cache: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makeini("[pytest]\n")
    copy_case(pytester.path / "cases" / "mycase")
    monkeypatch.chdir(pytester.path / "cases")
    result = pytester.runpytest_subprocess("mycase", f"--dcuopt-cache-dir={shared_build_cache}", *FAST,
                                           "-k", "correctness")
    result.assert_outcomes(passed=2, deselected=2)
    assert printed_state_path(result).parent.parent == pytester.path / ".dcuopt" / "runs"
    assert not (pytester.path / "cases" / ".dcuopt").exists()


def test_nothing_is_created_when_no_kernel_case_was_collected(pytester: pytest.Pytester) -> None:
    """Not the run dir nor the cache, even when they are named explicitly, and no log dir."""
    pytester.makepyfile(test_x="def test_x():\n    assert True\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--dcuopt-run-dir=named_run",
                                           "--dcuopt-cache-dir=named_cache")
    result.assert_outcomes(passed=1)
    for unwanted in ("named_run", "named_cache", ".dcuopt"):
        assert not (pytester.path / unwanted).exists(), unwanted
    result.stdout.no_fnmatch_line("state: *")


def test_a_case_with_every_test_deselected_writes_state_but_builds_nothing(pytester: pytest.Pytester) -> None:
    copy_case(pytester.path / "mycase")
    result = pytester.runpytest_subprocess("mycase", "-p", "no:cacheprovider", "-k", "no_such_test")
    result.assert_outcomes(deselected=4)
    home = pytester.path / ".dcuopt"
    assert printed_state_path(result).is_file()
    assert sorted(p.name for p in home.iterdir()) == ["runs"]  # no build-cache/, no logs/
