"""Calibrations once per device: the pytest side of the hand-over, with a real CPU kernel worker.

The GPU side (a worker seeding its device timer, and exporting what it measured) runs on the simulated stream in
tests/unit/timing/test_device_side_figures_and_calibration.py; here the request and reply carry the calibration
through a real worker process, and a host runtime (which has nothing to calibrate) neither takes nor gives one.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from pytest_dcuopt.bench.run import measure
from pytest_dcuopt.case.model import Branch, load_case
from pytest_dcuopt.check.checked_calls import TIMING_REPLY_CHECK
from pytest_dcuopt.report.records import BranchRecord
from pytest_dcuopt.run.devices import LOCK_DIR_ENV
from pytest_dcuopt.timing.calibration import CalibrationStore, DeviceCalibration
from pytest_dcuopt.timing.policy import TimingPolicy
from pytest_dcuopt.toolchains import make_toolchain
from pytest_dcuopt.toolchains.cache import BuildCache
from pytest_dcuopt.variant import BuildSettings, Variant, resolve
from tests.conftest import CASES

QUICK = TimingPolicy(warmup_s=0.01, min_samples=3, min_time_s=0.0, max_time_s=0.05, side_figures=False)


def baseline(settings: BuildSettings) -> Variant:
    case = load_case(CASES / "xdist_merge")
    variant = Variant(case.for_toolchain("cpu"), make_toolchain("cpu"), Branch("baseline", case.root / "kernel.cpp"),
                      BranchRecord(case.name, "cpu", "baseline", str(case.root / "kernel.cpp")))
    resolve(variant, settings)
    assert variant.worker is not None, variant.setup_error
    return variant


def test_the_time_request_carries_the_devices_calibration_and_a_host_worker_gives_none_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LOCK_DIR_ENV, str(tmp_path / "locks"))
    store = CalibrationStore()
    settings = BuildSettings(BuildCache(tmp_path / "cache"), None, (), tmp_path / "logs", 60.0, calibrations=store)
    variant = baseline(settings)
    assert variant.worker is not None and variant.worker.calibrations is store
    offered = DeviceCalibration("some GPU", "read", 1.9e9, "pid 1")
    store.keep(variant.worker.lock.name, offered)
    try:
        reply = measure(variant, TIMING_REPLY_CHECK, QUICK, 30)
        assert reply["calibration"] is None  # the host runtime has no calibration to give
        assert len(reply["samples"].seconds) >= QUICK.min_samples and reply["timed_calls_checked"] >= 4
        assert store.get(variant.worker.lock.name) is offered  # a None reply does not erase what the device had
    finally:
        variant.worker.close()


def test_without_a_store_each_worker_is_on_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LOCK_DIR_ENV, str(tmp_path / "locks"))
    variant = baseline(BuildSettings(BuildCache(tmp_path / "cache"), None, (), tmp_path / "logs", 60.0))
    assert variant.worker is not None and variant.worker.calibrations is None
    try:
        # the worker always answers with one (here None)
        assert "calibration" in measure(variant, TIMING_REPLY_CHECK, QUICK, 30)
    finally:
        variant.worker.close()
