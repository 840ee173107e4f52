"""Checked calls hold the device's lock shared (run/devices.shared_use): under xdist, or beside another session on
the host, they run beside each other but never beside a timing, and a timing waits for the calls in flight.

Each test has another process hold the lock (flock is per open file, and a process may not take its own lock twice).
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_dcuopt.case.model import Branch, load_case
from pytest_dcuopt.check.checked_calls import checked_call
from pytest_dcuopt.report.records import BranchRecord
from pytest_dcuopt.run.devices import HOST_LOCK, LOCK_DIR_ENV, SHARED_HOLDERS, TimingLock, device_lock, shared_use
from pytest_dcuopt.toolchains import make_toolchain
from pytest_dcuopt.toolchains.cache import BuildCache
from pytest_dcuopt.variant import BuildSettings, Variant, resolve
from tests.conftest import CASES

HOLDER = """
import sys
from pathlib import Path
from pytest_dcuopt.run.devices import device_lock
with device_lock(sys.argv[3], directory=Path(sys.argv[1]), timeout_s=60, shared=sys.argv[2] == "shared",
                 label="the other"):
    print("holding", flush=True)
    sys.stdin.readline()  # until the test says so
"""


class Elsewhere:
    """Another process holding the lock (shared or exclusive) until `release`."""

    def __init__(self, directory: Path, mode: str, name: str = "gpu-shared") -> None:
        self.process = subprocess.Popen([sys.executable, "-c", HOLDER, str(directory), mode, name],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None and self.process.stdout.readline().strip() == "holding"
        self.released_at: float | None = None

    def release(self) -> None:
        if self.released_at is None:
            self.released_at = time.perf_counter()
            self.process.communicate("go\n", timeout=30)


def in_thread(work: Callable[[], object]) -> tuple[threading.Thread, list[float]]:
    """Run `work` in a thread; the list gets the moment it returned."""
    done: list[float] = []
    thread = threading.Thread(target=lambda: (work(), done.append(time.perf_counter())))
    thread.start()
    return thread, done


def test_shared_holders_run_together_and_a_timing_waits_for_them(tmp_path: Path) -> None:
    other = Elsewhere(tmp_path, "shared")
    try:
        with device_lock("gpu-shared", directory=tmp_path, timeout_s=60, shared=True) as beside:
            assert beside.held  # taken while the other process holds it shared
        holds = []

        def timing() -> None:
            with device_lock("gpu-shared", directory=tmp_path, timeout_s=60) as hold:
                holds.append(hold)

        thread, done = in_thread(timing)
        thread.join(0.5)
        assert not done  # the timing waits for the shared holder
        other.release()
        thread.join(30)
        assert done and other.released_at is not None and done[0] > other.released_at
        assert holds[0].waited_for == SHARED_HOLDERS
    finally:
        other.release()


def test_a_checked_call_waits_for_another_process_timing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LOCK_DIR_ENV, str(tmp_path))
    other = Elsewhere(tmp_path, "exclusive")

    def call() -> None:
        with shared_use(TimingLock("gpu-shared"), "a checked call"):
            pass

    try:
        thread, done = in_thread(call)
        thread.join(0.5)
        assert not done
        other.release()
        thread.join(30)
        assert done and other.released_at is not None and done[0] > other.released_at
    finally:
        other.release()


def test_inside_its_own_hold_or_with_the_lock_off_a_checked_call_takes_nothing(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LOCK_DIR_ENV, str(tmp_path))
    with device_lock("gpu-shared", timeout_s=5):  # a timing that checks calls: the lock is this process's already
        with shared_use(TimingLock("gpu-shared")):  # device_lock would raise NestedDeviceLock here
            pass
    other = Elsewhere(tmp_path, "exclusive")
    try:
        with shared_use(TimingLock("gpu-shared", enabled=False, disabled_reason="--dcuopt-no-host-lock")):
            assert other.process.poll() is None  # turned off: it did not wait for the other's timing
    finally:
        other.release()


def test_back_to_back_checked_calls_do_not_starve_a_waiting_timing(tmp_path: Path) -> None:
    loop = """
import sys, time
from pathlib import Path
from pytest_dcuopt.run.devices import device_lock
end = time.time() + 10
print("looping", flush=True)
while time.time() < end:
    with device_lock("gpu-shared", directory=Path(sys.argv[1]), timeout_s=60, shared=True):
        time.sleep(0.02)
"""
    other = subprocess.Popen([sys.executable, "-c", loop, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout is not None and other.stdout.readline().strip() == "looping"
        time.sleep(0.2)
        with device_lock("gpu-shared", directory=tmp_path, timeout_s=60):
            assert other.poll() is None  # the timing got in while the calls went on
    finally:
        other.communicate(timeout=30)


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_a_checked_call_of_a_cpu_branch_waits_for_another_process_timing_the_host(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LOCK_DIR_ENV, str(tmp_path / "locks"))
    case = load_case(CASES / "xdist_merge")
    variant = Variant(case.for_toolchain("cpu"), make_toolchain("cpu"), Branch("baseline", case.root / "kernel.cpp"),
                      BranchRecord(case.name, "cpu", "baseline", str(case.root / "kernel.cpp")))
    resolve(variant, BuildSettings(BuildCache(tmp_path / "cache"), None, (), tmp_path / "logs", 60.0))
    assert variant.worker is not None and variant.worker.lock.name == HOST_LOCK, variant.setup_error
    try:
        checked_call(variant, case.dims, 0, "test")  # the worker is up: what follows times the wait only
        other = Elsewhere(tmp_path / "locks", "exclusive", HOST_LOCK)
        try:
            thread, done = in_thread(lambda: checked_call(variant, case.dims, 1, "test"))
            thread.join(0.5)
            assert not done  # it waits for the other process's timing of the host
            other.release()
            thread.join(60)
            assert done and other.released_at is not None and done[0] > other.released_at
        finally:
            other.release()
    finally:
        variant.worker.close()
