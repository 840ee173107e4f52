"""fallback.json names the model file without the machine's folders: the H200 run (tests/data/triton_capture_h200/
run2/fallback.json) recorded `<REPO>/tools/device/triton_capture.py`, an absolute path into the checkout."""
from __future__ import annotations

from pathlib import Path

import pytest

from pytest_dcuopt.triton_flow.fallback import model_path


def test_a_model_under_the_current_folder_is_kept_relative(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "tools").mkdir()
    model = tmp_path / "tools" / "model.py"
    model.write_text("")
    monkeypatch.chdir(tmp_path)
    assert model_path(model) == str(Path("tools") / "model.py")  # given absolute, as the device script does
    assert model_path(Path("tools") / "model.py") == str(Path("tools") / "model.py")
    assert model_path(Path("tools") / ".." / "tools" / "model.py") == str(Path("tools") / "model.py")


def test_a_model_elsewhere_is_kept_as_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "here").mkdir()
    model = tmp_path / "model.py"
    model.write_text("")
    monkeypatch.chdir(tmp_path / "here")
    assert model_path(model) == str(model)
    assert model_path(Path("..") / "model.py") == str(Path("..") / "model.py")


def test_the_recorded_h200_fallback_named_the_model_by_its_absolute_path() -> None:
    recorded = Path(__file__).resolve().parents[2] / "data" / "triton_capture_h200" / "run2" / "fallback.json"
    assert '"model": "<REPO>/tools/device/triton_capture.py"' in recorded.read_text()
