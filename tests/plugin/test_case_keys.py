"""Two case folders of one name in different places (`a/vs`, `b/vs`) are two cases in state.json and the terminal,
keyed by their folder relative to pytest's rootdir."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import CASES, FAST

CASE = CASES / "python_scale"


def test_two_cases_of_one_folder_name_keep_both_results(pytester: pytest.Pytester, shared_build_cache: Path) -> None:
    (pytester.path / "pytest.ini").write_text("[pytest]\n")
    for where, n in (("a", 16), ("b", 32)):
        shutil.copytree(CASE, pytester.path / where / "vs")
        (pytester.path / where / "vs" / "dims.json").write_text(json.dumps({"N": n}))
    run_dir = pytester.path / "run"
    result = pytester.runpytest_subprocess("a", "b", f"--dcuopt-run-dir={run_dir}",
                                           f"--dcuopt-cache-dir={shared_build_cache}", *FAST, "-k", "correctness")
    result.assert_outcomes(passed=2, deselected=2)
    state = json.loads((run_dir / "state.json").read_text())
    assert state["schema_version"] == 2
    assert sorted(state["cases"]) == ["a/vs", "b/vs"]
    sources = {key: case["toolchains"]["python"]["branches"]["baseline"]["source"] for key, case in
               state["cases"].items()}
    assert sources == {"a/vs": "a/vs/kernel.py", "b/vs": "b/vs/kernel.py"}
    result.stdout.fnmatch_lines(["a/vs [[]python[]]  champion*", "*", "*", "*", "b/vs [[]python[]]  champion*"])
