"""The workers of one xdist run share the device calibration (timing/calibration.py `CalibrationStore(shared_dir)`).

On the H200 two workers that each calibrated the event bracket got offsets 0.26-0.35 us apart, so a 5 us kernel's
median differed by 5-7% depending on which worker timed it (docs/performance.md). Stores of one run now hand the
first calibration to every worker; these tests use stores in one process the way workers use them in several.
"""
from __future__ import annotations

from pathlib import Path

from pytest_dcuopt.timing.calibration import XDIST_RUN_ENV, CalibrationStore, DeviceCalibration, shared_dir_for_run
from pytest_dcuopt.timing.device_timer import Offset


def calibration(offset_us: float, by: str) -> DeviceCalibration:
    bracket = Offset(True, offset_us * 1e-6, "", {"method": "calibrated", "measured_by": by, "batch": 34})
    return DeviceCalibration("NVIDIA H200", "read", 1.93e9, by, bracket)


def test_the_runs_first_calibration_is_what_every_worker_gets(tmp_path: Path) -> None:
    first, second, late = (CalibrationStore(tmp_path / "run") for _ in range(3))
    measured = calibration(1.679, "pid 1")
    first.keep("gpu-0", measured)
    assert second.get("gpu-0") == measured  # exactly: the offset is not rounded on the way
    second.keep("gpu-0", calibration(1.938, "pid 2"))  # a worker that measured again keeps the run's first
    assert second.get("gpu-0") == measured and late.get("gpu-0") == measured
    assert late.get("gpu-1") is None  # another device: measured there first


def test_without_a_shared_folder_each_store_is_on_its_own(tmp_path: Path) -> None:
    one, other = CalibrationStore(), CalibrationStore()
    one.keep("gpu-0", calibration(1.679, "pid 1"))
    assert other.get("gpu-0") is None and one.get("gpu-0") is not None


def test_an_unreadable_shared_calibration_falls_back_to_the_workers_own(tmp_path: Path) -> None:
    store = CalibrationStore(tmp_path / "run")
    own = calibration(1.7, "pid 3")
    store.keep("gpu-0", own)
    (tmp_path / "run" / "gpu-0.json").write_text("{not json")
    assert store.get("gpu-0") == own


def test_the_shared_folder_is_named_by_the_xdist_run(tmp_path: Path) -> None:
    assert shared_dir_for_run(tmp_path, {}) is None  # not under xdist
    assert shared_dir_for_run(tmp_path, {XDIST_RUN_ENV: "3f2a9c"}) == tmp_path / "calibrations-3f2a9c"
    assert shared_dir_for_run(tmp_path, {XDIST_RUN_ENV: "../../etc"}) is None  # never a path outside the lock dir
