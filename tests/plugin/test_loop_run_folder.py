"""The loop's run folder inside a case folder: made whole or not at all by `dcuopt setup`, and left out when a plain
`pytest` walks the case folder (it holds copies of the case), while naming it still collects it."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytest_dcuopt.cli import env
from pytest_dcuopt.cli.main import main
from tests.conftest import DATA
from tests.context import skip_if_no_gxx

CASE = DATA / "loop_rowsum" / "case"

pytestmark = skip_if_no_gxx


def setup_args(case: Path, cache: Path) -> list[str]:
    return ["setup", str(case), "--pytest-args",
            f"--dcuopt-examples=5 --dcuopt-max-time=0.2 --dcuopt-cache-dir={cache}"]


def test_a_setup_that_fails_after_preflight_leaves_no_run_folder(tmp_path: Path, shared_build_cache: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    case = tmp_path / "rowsum"
    shutil.copytree(CASE, case)

    def missing_package_file(arch: str | None = None) -> dict:
        raise FileNotFoundError("site-packages/pytest_dcuopt/toolchains/cuda_sync_hooks.h")

    monkeypatch.setattr(env, "probe", missing_package_file)  # a late step fails, as a broken install's did
    with pytest.raises(FileNotFoundError):
        main(setup_args(case, shared_build_cache))
    assert not list(case.glob("run_*")), sorted(case.iterdir())


def test_plain_pytest_leaves_a_loop_run_out_and_says_so(tmp_path: Path, shared_build_cache: Path,
                                                        pytester: pytest.Pytester) -> None:
    case = pytester.path / "rowsum"
    shutil.copytree(CASE, case)
    assert main(setup_args(case, shared_build_cache)) == 0
    (run_dir,) = case.glob("run_*")

    walked = pytester.runpytest_subprocess("rowsum", "--collect-only", "-q", f"--dcuopt-run-dir={tmp_path / 'r1'}")
    collected = [line for line in walked.outlines if "::" in line]
    assert collected and all(line.startswith("rowsum/ref.py::") for line in collected), walked.outlines
    walked.stdout.fnmatch_lines([f"dcuopt: not collected: 1 dcuopt loop run folder(s)*{run_dir}*`pytest RUN_DIR`)"])

    named = pytester.runpytest_subprocess(str(run_dir), "--collect-only", "-q", f"--dcuopt-run-dir={tmp_path / 'r2'}")
    assert any(run_dir.name in line for line in named.outlines if "::" in line), named.outlines
