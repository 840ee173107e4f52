"""files.py: the run directory's lock."""
from __future__ import annotations

from pathlib import Path

import pytest

from pytest_dcuopt.files import RunDirInUse, RunDirLock


def test_a_second_holder_of_a_run_dir_is_refused_and_an_unused_one_leaves_nothing(tmp_path: Path) -> None:
    run_dir = tmp_path / "runs" / "shared"
    first = RunDirLock(run_dir)
    first.acquire()
    with pytest.raises(RunDirInUse, match=r"shared is the run directory of another pytest session .* Give each "
                                          r"session its own --dcuopt-run-dir"):
        RunDirLock(run_dir).acquire()
    first.release()
    assert not (tmp_path / "runs").exists()  # made for the run, never written: removed again
    second = RunDirLock(run_dir)
    second.acquire()  # free again once released
    (run_dir / "state.json").write_text("{}")
    second.release()
    assert (run_dir / "state.json").is_file()
