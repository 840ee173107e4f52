"""Issue 10, a harness that keeps up: builds in parallel before the first test (variant.prebuild), with g++.

A pre-built artifact is what `resolve` loads (no second build); a compile error is kept on the variant and reported
by `resolve` exactly as a build inside the test would report it.
"""
from __future__ import annotations

import re
import shutil
import threading
import time
from pathlib import Path

import pytest

from pytest_dcuopt.case.model import Branch, load_case
from pytest_dcuopt.errors import CompileError
from pytest_dcuopt.report.records import BranchRecord
from pytest_dcuopt.toolchains import make_toolchain
from pytest_dcuopt.toolchains.base import Artifact
from pytest_dcuopt.toolchains.cache import BuildCache
from pytest_dcuopt.toolchains.cpu import CpuToolchain
from pytest_dcuopt.variant import BuildSettings, Variant, prebuild, resolve
from tests.conftest import CASES

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")


def case_with_a_broken_branch(tmp_path: Path) -> Path:
    root = tmp_path / "xdist_merge"
    shutil.copytree(CASES / "xdist_merge", root)
    broken = root / "branches" / "broken"
    broken.mkdir()
    (broken / "kernel.cpp").write_text('extern "C" void solve(const float* x, float* y, int N) { y[0] = x[0] }\n')
    return root


def cpu_variants(root: Path) -> dict[str, Variant]:
    case = load_case(root)
    toolchain = make_toolchain("cpu")  # one toolchain object shared by every branch, as in the session
    return {b.name: Variant(case.for_toolchain("cpu"), toolchain, Branch(b.name, b.source),
                            BranchRecord(case.name, "cpu", b.name, str(b.source)))
            for b in case.sources_for((".cpp",))}


def test_prebuilt_artifacts_are_loaded_and_compile_errors_kept(tmp_path: Path) -> None:
    found = cpu_variants(case_with_a_broken_branch(tmp_path))
    settings = BuildSettings(BuildCache(tmp_path / "cache"), None, (), tmp_path / "logs", 60.0)
    report = prebuild(found.values(), settings.cache, jobs=2)
    assert (report.built, report.failed, report.errors, report.jobs) == (2, 1, (), 2)
    assert "built 3 branches before the first test with 2 job(s)" in report.describe()
    assert "1 compile errors" in report.describe()
    baseline = found["baseline"]
    artifact = baseline.prebuilt
    assert isinstance(artifact, Artifact) and artifact.cached is False and artifact.path.exists()
    assert isinstance(found["broken"].prebuilt, CompileError)
    try:
        for variant in found.values():
            resolve(variant, settings)
        assert baseline.artifact is artifact and baseline.prebuilt is None and baseline.worker is not None
        assert baseline.record.build is not None and baseline.record.build["cached"] is False
        broken = found["broken"]
        assert broken.worker is None and isinstance(broken.setup_error, CompileError)
        assert broken.record.error is not None and broken.record.error["kind"] == "compile error"
        assert re.search(r"expected .;.", broken.record.error["message"])  # g++'s own words, from the pre-build
        # Nothing left to build: a second pre-build does nothing.
        assert prebuild(found.values(), settings.cache, jobs=2).built == 0
    finally:
        for variant in found.values():
            if variant.worker is not None:
                variant.worker.close()


class SlowCpu(CpuToolchain):
    """g++, with how many of its builds ran at the same time recorded (each build also waits 0.3 s)."""

    def __init__(self) -> None:
        super().__init__()
        self.running = 0
        self.most = 0
        self._guard = threading.Lock()

    def build(self, source: Path, cache: BuildCache) -> Artifact:
        with self._guard:
            self.running += 1
            self.most = max(self.most, self.running)
        try:
            time.sleep(0.3)
            return super().build(source, cache)
        finally:
            with self._guard:
                self.running -= 1


@pytest.mark.parametrize("jobs, most", [(1, 1), (3, 3)])
def test_jobs_builds_run_at_once(tmp_path: Path, jobs: int, most: int) -> None:
    found = cpu_variants(case_with_a_broken_branch(tmp_path))
    toolchain = SlowCpu()
    for variant in found.values():
        variant.toolchain = toolchain
    report = prebuild(found.values(), BuildCache(tmp_path / "cache"), jobs=jobs)
    assert toolchain.most == most and report.built + report.failed == 3


def test_other_errors_are_left_for_the_test_that_builds_the_branch(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    variant = cpu_variants(CASES / "xdist_merge")["baseline"]
    monkeypatch.setenv("CXX", "no-such-compiler-dcuopt")  # the compiler vanished after collection
    report = prebuild([variant], BuildCache(tmp_path / "cache"), jobs=1)
    assert report.built == report.failed == 0 and len(report.errors) == 1
    assert report.errors[0].startswith("xdist_merge/cpu/baseline: FileNotFoundError")
    assert variant.prebuilt is None  # resolve builds again inside the test and reports the error there
