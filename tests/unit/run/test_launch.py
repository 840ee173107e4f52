"""A worker's working directory and import path (run/isolation.py): a scratch folder of its own, and the imports
`python -m` started in pytest's directory would have had."""
from __future__ import annotations

import os

from pytest_dcuopt.run.launch import PACKAGE_ROOT, SCRATCH_PREFIX, scratch_dir, worker_environ


def test_each_worker_start_gets_a_fresh_empty_scratch_folder_named_safely() -> None:
    first, second = scratch_dir("case/cpu/x'$(touch F)'"), scratch_dir("case/cpu/x'$(touch F)'")
    try:
        assert first != second and not any(first.iterdir())
        assert first.name.startswith(SCRATCH_PREFIX) and "/" not in first.name[len(SCRATCH_PREFIX):]
        assert all(c.isalnum() or c in "-_." for c in first.name)
    finally:
        first.rmdir()
        second.rmdir()


def test_the_project_and_the_package_stay_importable_and_the_users_path_is_kept() -> None:
    environ = worker_environ({"PYTHONPATH": f"/opt/mine{os.pathsep}/project", "HOME": "/home/u"}, "/project")
    paths = environ["PYTHONPATH"].split(os.pathsep)
    assert "/project" in paths and "/opt/mine" in paths and len(paths) == len(set(paths))
    assert environ["HOME"] == "/home/u"
    if PACKAGE_ROOT.name not in ("site-packages", "dist-packages"):
        assert paths[0] == str(PACKAGE_ROOT)
    assert worker_environ({}, "/project")["PYTHONPATH"].split(os.pathsep)[-1] == "/project"
