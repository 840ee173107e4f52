"""Digests of the files a run relies on, kept in the pytest process (run/integrity.py)."""
from __future__ import annotations

from pathlib import Path

from pytest_dcuopt.run.integrity import Digests


def _case(root: Path) -> Path:
    (root / "branches" / "b1").mkdir(parents=True)
    (root / "ref.py").write_text("def reference(x, y, N):\n    y.copy_(x)\n")
    (root / "dims.json").write_text('{"N": 4}\n')
    (root / "branches" / "b1" / "kernel.cpp").write_text("// k\n")
    return root


def test_a_rewritten_reference_is_named(tmp_path: Path) -> None:
    digests = Digests()
    case = _case(tmp_path / "case")
    digests.watch_case(case)
    assert digests.changed() == []
    (case / "ref.py").write_text("def reference(x, y, N):\n    pass\n")
    changed = digests.changed()
    assert len(changed) == 1 and str(case / "ref.py") in changed[0] and "was rewritten" in changed[0]


def test_an_untouched_case_and_an_added_file_are_not_flagged(tmp_path: Path) -> None:
    digests = Digests()
    case = _case(tmp_path / "case")
    digests.watch_case(case)
    (case / "notes.txt").write_text("written by the user after collection")
    assert digests.changed() == []


def test_a_library_rewritten_after_its_first_load_is_refused(tmp_path: Path) -> None:
    digests = Digests()
    library = tmp_path / "cache" / "abc" / "kernel.so"
    library.parent.mkdir(parents=True)
    library.write_bytes(b"\x7fELF first build")
    assert digests.check_library(library, "c/cpu/baseline") is None
    assert digests.check_library(library, "c/cpu/baseline") is None
    library.write_bytes(b"\x7fELF another branch's code")
    refused = digests.check_library(library, "c/cpu/baseline")
    assert refused is not None and str(library) in refused and "refusing to load" in refused


def test_earlier_states_are_watched_but_not_this_runs_own_nor_the_latest_link(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    for name in ("run_1", "run_2"):
        (runs / name).mkdir(parents=True)
        (runs / name / "state.json").write_text("{}")
    (runs / "latest").symlink_to(runs / "run_2")
    digests = Digests()
    digests.watch_states(runs, runs / "run_2")
    assert list(digests.seen) == [(runs / "run_1" / "state.json").absolute()]
    (runs / "run_1" / "state.json").write_text('{"cases": {}}')
    assert "an earlier run's state.json" in digests.changed()[0]


def test_a_change_is_named_once_when_it_happens_and_a_touch_is_not_a_change(tmp_path: Path) -> None:
    import os

    digests = Digests()
    case = _case(tmp_path / "case")
    digests.watch_case(case)
    assert digests.tampered_since() == []
    os.utime(case / "dims.json")  # its status moves, its content does not
    assert digests.tampered_since() == []
    (case / "ref.py").write_text("def reference(x, y, N):\n    pass\n")
    os.utime(case / "ref.py", ns=(0, 0))  # the modification time put back does not hide it: the change time moved
    changed = digests.tampered_since()
    assert len(changed) == 1 and str(case / "ref.py") in changed[0]
    assert digests.tampered_since() == []  # blamed once
    assert len(digests.changed()) == 1  # and still failing the run at its end
