"""`dcuopt setup`'s removed `--ptr-size`: a size is refused with the reason and the fix, the seed's 0 is noted and
ignored; neither runs anything."""
from __future__ import annotations

from pathlib import Path

import pytest

from pytest_dcuopt.cli.main import main


def test_a_pointer_size_is_refused_with_where_shapes_come_from(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["setup", str(tmp_path / "case"), "--ptr-size", "4096"]) == 2
    err = capsys.readouterr().err
    assert "--ptr-size 4096 is no longer accepted" in err and "ref.py's `shapes`" in err and "drop --ptr-size" in err
    assert not list(tmp_path.iterdir())


def test_the_seeds_default_pointer_size_is_noted_and_ignored(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["setup", str(tmp_path / "case"), "--ptr-size", "0"]) == 2  # then the missing case is the problem
    err = capsys.readouterr().err
    assert "--ptr-size is deprecated and ignored" in err and "is not a kernel case" in err
