"""How results name a case: its folder relative to pytest's rootdir."""
from __future__ import annotations

from pathlib import Path

from pytest_dcuopt.case.model import case_key


def test_cases_of_one_folder_name_in_two_places_get_two_keys(tmp_path: Path) -> None:
    assert case_key(tmp_path / "a" / "vs", tmp_path) == "a/vs"
    assert case_key(tmp_path / "b" / "vs", tmp_path) == "b/vs"


def test_the_rootdir_itself_and_no_rootdir_give_the_folder_name(tmp_path: Path) -> None:
    assert case_key(tmp_path / "vs", tmp_path / "vs") == "vs"
    assert case_key(tmp_path / "vs", None) == "vs"


def test_a_case_outside_the_rootdir_is_named_by_its_absolute_path(tmp_path: Path) -> None:
    assert case_key(tmp_path / "elsewhere" / "vs", tmp_path / "project") == (tmp_path / "elsewhere" / "vs").as_posix()
