"""Two sessions given the same --dcuopt-run-dir: the second is refused with the reason and the fix while the first
holds it, instead of one session's state.json silently replacing the other's."""
from __future__ import annotations

from pathlib import Path

import pytest

from pytest_dcuopt.files import RunDirLock
from tests.conftest import CASES, FAST


def test_a_session_given_a_run_dir_another_session_holds_is_a_usage_error(pytester: pytest.Pytester,
                                                                           shared_build_cache: Path) -> None:
    run_dir = pytester.path / "shared_run"
    held = RunDirLock(run_dir)  # as a session in another process holds it while it runs
    held.acquire()
    try:
        (pytester.path / "python_scale").mkdir()
        for name in ("dims.json", "kernel.py", "ref.py"):
            (pytester.path / "python_scale" / name).write_text((CASES / "python_scale" / name).read_text())
        result = pytester.runpytest_subprocess("python_scale", f"--dcuopt-run-dir={run_dir}",
                                               f"--dcuopt-cache-dir={shared_build_cache}", *FAST)
    finally:
        held.release()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.outlines
    result.stderr.fnmatch_lines(["*--dcuopt-run-dir: *shared_run is the run directory of another pytest session "
                                 "that is still running*"])
    assert not (run_dir / "state.json").exists()
