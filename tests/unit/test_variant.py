"""Builds in the background while the tests run (variant.BackgroundBuilds),
with g++.

A background artifact is what `resolve` loads (no second build); a compile error is kept and reported by `resolve`
exactly as a build inside the test would report it; a test waits for its own branch only, a timing for every build.
"""
from __future__ import annotations

import re
import shutil
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from pathlib import Path

import pytest

from pytest_dcuopt.bench.run import measure
from pytest_dcuopt.case.model import Branch, load_case
from pytest_dcuopt.check.checked_calls import TIMING_REPLY_CHECK
from pytest_dcuopt.errors import CompileError
from pytest_dcuopt.report.records import BranchRecord
from pytest_dcuopt.run.devices import LOCK_DIR_ENV
from pytest_dcuopt.timing.policy import TimingPolicy
from pytest_dcuopt.toolchains import make_toolchain
from pytest_dcuopt.toolchains.base import Artifact
from pytest_dcuopt.toolchains.cache import BuildCache
from pytest_dcuopt.toolchains.cpu import CpuToolchain
from pytest_dcuopt.variant import BackgroundBuilds, BuildFlagsDiffer, BuildSettings, Variant, resolve
from tests.conftest import CASES

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")

QUICK = TimingPolicy(warmup_s=0.01, min_samples=3, min_time_s=0.0, max_time_s=0.05, side_figures=False)


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


def test_background_artifacts_are_loaded_and_compile_errors_kept(tmp_path: Path) -> None:
    found = cpu_variants(case_with_a_broken_branch(tmp_path))
    builds = BackgroundBuilds(found.values(), BuildCache(tmp_path / "cache"), jobs=2)
    settings = BuildSettings(BuildCache(tmp_path / "cache"), None, (), tmp_path / "logs", 60.0, builds=builds)
    baseline = found["baseline"]
    assert builds.count == 3 and isinstance(baseline.prebuilt, Future)
    try:
        builds.wait()
        report = builds.report()
        assert (report.built, report.failed, report.in_test, report.errors, report.jobs) == (2, 1, 0, (), 2)
        assert "background builds: 2 built or reused, 1 compile errors;" in report.describe()
        artifact = baseline.prebuilt.result()
        assert isinstance(artifact, Artifact) and artifact.cached is False and artifact.path.exists()
        for variant in found.values():
            resolve(variant, settings)
        assert baseline.artifact is artifact and baseline.worker is not None
        assert all(variant.prebuilt is None for variant in found.values())  # each taken by its resolve
        assert baseline.record.build is not None and baseline.record.build["cached"] is False
        broken = found["broken"]
        assert broken.worker is None and isinstance(broken.setup_error, CompileError)
        assert broken.record.error is not None and broken.record.error["kind"] == "compile error"
        assert re.search(r"expected .;.", broken.record.error["message"])  # g++'s own words, from the background
        # Nothing left to build: the resolved variants are not queued again.
        assert BackgroundBuilds(found.values(), settings.cache, jobs=2).count == 0
    finally:
        builds.close()
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
    builds = BackgroundBuilds(found.values(), BuildCache(tmp_path / "cache"), jobs=jobs)
    builds.wait()
    report = builds.report()
    assert toolchain.most == most and report.built + report.failed == 3


def test_other_errors_are_left_for_the_test_that_builds_the_branch(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    variant = cpu_variants(CASES / "xdist_merge")["baseline"]
    monkeypatch.setenv("CXX", "no-such-compiler-dcuopt")  # the compiler vanished after collection
    builds = BackgroundBuilds([variant], BuildCache(tmp_path / "cache"), jobs=1)
    builds.wait()
    report = builds.report()
    assert report.built == report.failed == 0 and len(report.errors) == 1
    assert report.errors[0].startswith("xdist_merge/cpu/baseline: FileNotFoundError")
    assert builds.take(variant) is None  # resolve builds again inside the test and reports the error there


class GatedCpu(CpuToolchain):
    """g++, where the build of the branch named `held` waits until the test opens the gate."""

    def __init__(self, held: str) -> None:
        super().__init__()
        self.held = held
        self.gate = threading.Event()

    def build(self, source: Path, cache: BuildCache) -> Artifact:
        if source.parent.name == self.held:
            assert self.gate.wait(60), "the test never opened the gate"
        return super().build(source, cache)


def gated_variants(tmp_path: Path) -> tuple[dict[str, Variant], GatedCpu]:
    root = tmp_path / "xdist_merge"
    shutil.copytree(CASES / "xdist_merge", root)
    held = root / "branches" / "held"
    held.mkdir()
    shutil.copy(root / "kernel.cpp", held / "kernel.cpp")
    found = cpu_variants(root)
    toolchain = GatedCpu("held")
    for variant in found.values():
        variant.toolchain = toolchain
    return found, toolchain


@contextmanager
def released(builds: BackgroundBuilds, toolchain: GatedCpu, variant: Variant) -> Iterator[None]:
    """Whatever the test asserted: the gate opened, the builds closed, the variant's worker ended."""
    try:
        yield
    finally:
        toolchain.gate.set()
        builds.close()
        if variant.worker is not None:
            variant.worker.close()


def test_a_test_waits_for_its_own_branch_and_a_timing_for_every_build(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LOCK_DIR_ENV, str(tmp_path / "locks"))
    found, toolchain = gated_variants(tmp_path)
    order = [found["held"], found["baseline"]]  # the held build starts first and keeps running
    builds = BackgroundBuilds(order, BuildCache(tmp_path / "cache"), jobs=2)
    waits: list[str] = []
    wait = builds.wait

    def quiet() -> None:  # what a timing calls first: recorded, then the real wait
        waits.append("quiet")
        wait()

    builds.wait = quiet  # type: ignore[method-assign]
    settings = BuildSettings(BuildCache(tmp_path / "cache"), None, (), tmp_path / "logs", 60.0, builds=builds)
    baseline = found["baseline"]
    timing: list[dict[str, object]] = []
    with released(builds, toolchain, baseline):
        resolve(baseline, settings)  # returns while `held` is still building: it waits for its own build only
        assert baseline.worker is not None and not found["held"].prebuilt.done()  # type: ignore[union-attr]
        timer = threading.Thread(target=lambda: timing.append(measure(baseline, TIMING_REPLY_CHECK, QUICK, 60)))
        timer.start()
        deadline = time.monotonic() + 30
        while waits != ["quiet"] and time.monotonic() < deadline:
            time.sleep(0.01)
        assert timer.is_alive() and not timing and waits == ["quiet"]  # the timing waits for the held build
        time.sleep(1.0)  # the timing is waiting now (or about to): the 0.5 s asserted below leaves half for a busy box
        toolchain.gate.set()
        timer.join(60)
        assert timing and len(timing[0]["samples"].seconds) >= QUICK.min_samples  # type: ignore[attr-defined]
        assert found["held"].prebuilt.done()  # type: ignore[union-attr]
        assert builds.report().waited_s >= 0.5  # counted from the timing's call, after the thread started


def test_a_build_a_test_needs_before_its_turn_is_taken_off_the_queue_and_run_in_the_test(tmp_path: Path) -> None:
    found, toolchain = gated_variants(tmp_path)
    order = [found["held"], found["drops_tail"], found["baseline"]]  # one job: the held build blocks the queue
    builds = BackgroundBuilds(order, BuildCache(tmp_path / "cache"), jobs=1)
    settings = BuildSettings(BuildCache(tmp_path / "cache"), None, (), tmp_path / "logs", 60.0, builds=builds)
    baseline = found["baseline"]
    with released(builds, toolchain, baseline):
        resolve(baseline, settings)
        assert baseline.worker is not None and baseline.artifact is not None and baseline.prebuilt is None
        report = builds.report()
        assert report.in_test == 1 and report.built == 0  # built in its test, not by the blocked pool
        toolchain.gate.set()
        builds.wait()
        assert builds.report().built == 2  # the held and the drops_tail branch, once the gate opened


def test_closing_drops_the_queued_builds_and_waits_for_the_running_one(tmp_path: Path) -> None:
    found, toolchain = gated_variants(tmp_path)
    order = [found["held"], found["drops_tail"], found["baseline"]]
    builds = BackgroundBuilds(order, BuildCache(tmp_path / "cache"), jobs=1)
    closer = threading.Thread(target=builds.close)
    closer.start()
    closer.join(0.5)
    assert closer.is_alive()  # the running compiler is waited for
    toolchain.gate.set()
    closer.join(60)
    assert not closer.is_alive() and builds.report().built == 1  # the two queued builds were dropped
    assert found["drops_tail"].prebuilt is not None and found["drops_tail"].prebuilt.cancelled()
    assert builds.take(found["drops_tail"]) is None  # its test builds it, as without background builds


def test_a_variant_whose_toolchain_other_settings_made_is_not_resolved(tmp_path: Path) -> None:
    """Its build would take one set of flags and its worker another: refused before anything is built."""
    settings = BuildSettings(BuildCache(tmp_path / "cache"), None, ("-DONE",), tmp_path / "logs", 60.0)
    root = CASES / "xdist_merge"
    case = load_case(root)
    source = root / "kernel.cpp"
    record = BranchRecord(case.name, "cpu", "baseline", str(source))
    other = Variant(case, make_toolchain("cpu", None, ("-DOTHER",)), Branch("baseline", source), record)
    with pytest.raises(BuildFlagsDiffer, match=r"flags \['-DOTHER'\].*flags \['-DONE'\]"):
        resolve(other, settings)
    assert other.artifact is None and other.worker is None
    same = Variant(case, settings.toolchain("cpu"), Branch("baseline", source), record)
    assert same.toolchain.extra_flags == ("-DONE",)
    ablated = settings.adding_flags(["-DTWO"])
    assert ablated.extra_flags == ("-DONE", "-DTWO") and ablated.toolchain("cpu").extra_flags == ablated.extra_flags
    assert ablated.cache is settings.cache
