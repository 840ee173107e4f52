"""files.py: `runs/latest` never costs the user a folder, and a run folder that cannot be written is named."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_dcuopt.files import LatestLinkWarning, NotWritable, point_latest, write_atomic


def runs(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "runs"
    new = root / "run_2"
    new.mkdir(parents=True)
    return root, new


def test_latest_as_a_real_folder_is_left_whole_and_said(tmp_path: Path) -> None:
    root, new = runs(tmp_path)
    (root / "latest").mkdir()
    (root / "latest" / "precious.txt").write_text("keep me")
    with pytest.warns(LatestLinkWarning, match=r"latest is a real folder, not a link, so it was left as it is"):
        note = point_latest(new)
    assert note is not None and "run_2" in note
    assert (root / "latest" / "precious.txt").read_text() == "keep me"


@pytest.mark.parametrize("target", ["run_gone", "run_1"], ids=["dangling link", "link to an older run"])
def test_latest_as_a_link_is_replaced(tmp_path: Path, target: str) -> None:
    root, new = runs(tmp_path)
    (root / "run_1").mkdir()
    (root / "latest").symlink_to(target)
    assert point_latest(new) is None
    assert os.readlink(root / "latest") == "run_2" and (root / "latest").resolve() == new.resolve()
    assert (root / "run_1").is_dir()
    assert [p.name for p in root.iterdir() if p.name.startswith(".latest")] == []


def test_latest_is_created_when_missing(tmp_path: Path) -> None:
    root, new = runs(tmp_path)
    assert point_latest(new) is None and (root / "latest").resolve() == new.resolve()


def test_a_run_dir_that_cannot_be_created_is_named_with_the_fix(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    with pytest.raises(NotWritable, match=r"cannot write .*afile/run/state.json: the folder .*afile/run cannot be "
                                          r"created or written.*--dcuopt-run-dir") as raised:
        write_atomic(tmp_path / "afile" / "run" / "state.json", "{}")
    assert isinstance(raised.value, OSError)  # callers that catch OSError still do
