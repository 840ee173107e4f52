"""Calibrations that depend on the device, not on the kernel: measured once per device per session.

Each branch runs in a worker process of its own, and each worker used to calibrate again: the event
bracket's cost (`offset.calibrate_bracket`, hundreds of bracketed tiny kernels) and the delay kernel's rate
(`bracket.calibrate_hiding`). Now the first worker on a device measures them and its `time` reply carries
them (`DeviceCalibration`); the pytest process keeps the latest per device (`CalibrationStore`, keyed by the
device's timing-lock name, i.e. the physical GPU) and hands them to later workers on that device in their
`time` request; a worker seeds its device timer's caches with them (`seed_device_timer`). Only the first branch pays.

What is shared keeps the --dcuopt-event-offset semantics: `calibrated` uses the handed-over bracket cost,
`profiler` pairs each bound call with its own profiler records (per kernel: never shared), `none` subtracts
nothing. A calibration from another device or flush mode is refused and measured afresh; the record says which
happened (`timing.event_offset.handed_over`, `timing.launch_hiding.cycles_per_us_from`,
`timing.calibration_handover`).

Under xdist the workers of one run share it too (`CalibrationStore(shared_dir)`, a folder per run and host): the
bracket's cost varies by a few tenths of a microsecond from one calibration to the next, so two workers that each
calibrated would give a 5 us kernel medians some percent apart depending on which worker timed it. The first
calibration of the run on a device is written there (under that device's timing lock, so nobody else is timing)
and every worker takes it.
"""
from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from .device_timer import DeviceTimer, Offset


@dataclass(frozen=True)
class DeviceCalibration:
    """What a worker measured about its device that later workers on the same device may reuse."""

    device: str  # the runtime's name for the device (checked on receipt)
    flush_mode: str  # the L2 flush the bracket was calibrated with (read, write, none)
    cycles_per_s: float | None = None  # the delay kernel's rate
    rate_measured_by: str = ""  # e.g. "pid 1234"
    bracket: Offset | None = None  # the calibrated event-bracket cost (its details say who measured it)

    def to_json(self) -> dict[str, Any]:
        return {"device": self.device, "flush_mode": self.flush_mode, "cycles_per_s": self.cycles_per_s,
                "rate_measured_by": self.rate_measured_by,
                "bracket": self.bracket.to_json() if self.bracket is not None else None}

    def to_exact_json(self) -> dict[str, Any]:
        """Every field as it is (the record's `to_json` rounds the offset): what `from_exact_json` reads back."""
        bracket = self.bracket
        return {"device": self.device, "flush_mode": self.flush_mode, "cycles_per_s": self.cycles_per_s,
                "rate_measured_by": self.rate_measured_by,
                "bracket": None if bracket is None else {"applied": bracket.applied, "seconds": bracket.seconds,
                                                         "reason": bracket.reason, "details": bracket.details}}

    @classmethod
    def from_exact_json(cls, data: dict[str, Any]) -> DeviceCalibration:
        bracket = data.get("bracket")
        rate = data.get("cycles_per_s")
        return cls(str(data["device"]), str(data["flush_mode"]), float(rate) if rate is not None else None,
                   str(data.get("rate_measured_by", "")),
                   None if bracket is None else Offset(bool(bracket["applied"]), float(bracket["seconds"]),
                                                       str(bracket.get("reason", "")), dict(bracket["details"])))


@runtime_checkable
class CalibratedRuntime(Protocol):
    """A worker runtime that can take a calibration from an earlier worker and give its own back."""

    def accept_calibration(self, calibration: DeviceCalibration) -> None: ...

    def calibration(self) -> DeviceCalibration | None: ...


def export_calibration(device_timer: DeviceTimer, device: str, flush_mode: str) -> DeviceCalibration | None:
    """The device timer's calibrations (None when it has none yet)."""
    hiding = device_timer.hiding_cache or {}
    bracket = (device_timer.bracket_cache or {}).get("offset")
    rate = hiding.get("cycles_per_s")
    if rate is None and bracket is None:
        return None
    return DeviceCalibration(device, flush_mode, rate, str(hiding.get("measured_by", "")), bracket)


def seed_device_timer(device_timer: DeviceTimer, calibration: DeviceCalibration, device: str,
                 flush_mode: str) -> dict[str, Any]:
    """Fill the device timer's empty calibration caches from `calibration`; what was taken, or why nothing was."""
    if calibration.device != device or calibration.flush_mode != flush_mode:
        return {"accepted": False,
                "reason": (f"the calibration offered was measured on {calibration.device!r} with L2 flush "
                           f"{calibration.flush_mode!r}, this worker times on {device!r} with {flush_mode!r}: "
                           "measured afresh")}
    taken = []
    hiding, bracket_cache = device_timer.hiding_cache, device_timer.bracket_cache
    if hiding is not None and calibration.cycles_per_s and "cycles_per_s" not in hiding:
        hiding.update(cycles_per_s=calibration.cycles_per_s, measured_by=calibration.rate_measured_by,
                      handed_over=True)
        taken.append("delay kernel rate")
    if bracket_cache is not None and calibration.bracket is not None and "offset" not in bracket_cache:
        bracket = calibration.bracket
        bracket_cache["offset"] = replace(bracket, details={**bracket.details, "handed_over": True})
        taken.append("event bracket cost")
    bracket_by = str(calibration.bracket.details.get("measured_by", "")) if calibration.bracket is not None else ""
    return {"accepted": True, "taken": taken, "measured_by": calibration.rate_measured_by or bracket_by}


class CalibrationStore:
    """The pytest process's side: the latest calibration per device key, handed to the next worker there.

    With `shared_dir` (xdist: one folder per run and host, `shared_dir_for_run`), the run's first calibration on a
    device is also written there as `<device key>.json`, and `get` prefers it, so every worker of the run subtracts
    the same bracket cost. The device key is the timing lock's name, and calibrations are measured and kept while
    that lock is held, so no two workers write one at the same time; the file is made once and never replaced.
    Thread-safe (builds run in threads; a timing request may come from any of them in the future)."""

    def __init__(self, shared_dir: Path | None = None) -> None:
        self._by_device: dict[str, DeviceCalibration] = {}
        self._shared: dict[str, DeviceCalibration] = {}  # read from shared_dir: written once, so read once
        self._lock = threading.Lock()
        self.shared_dir = shared_dir

    def get(self, device_key: str) -> DeviceCalibration | None:
        if device_key not in self._shared:
            shared = self._read_shared(device_key)
            if shared is not None:
                self._shared[device_key] = shared
        with self._lock:
            return self._shared.get(device_key) or self._by_device.get(device_key)

    def keep(self, device_key: str, calibration: DeviceCalibration | None) -> None:
        if calibration is None:
            return
        with self._lock:
            self._by_device[device_key] = calibration
        self._write_shared(device_key, calibration)

    def _shared_path(self, device_key: str) -> Path | None:
        return self.shared_dir / f"{device_key}.json" if self.shared_dir is not None else None

    def _read_shared(self, device_key: str) -> DeviceCalibration | None:
        path = self._shared_path(device_key)
        if path is None or not path.is_file():
            return None
        try:
            return DeviceCalibration.from_exact_json(json.loads(path.read_text()))
        except (OSError, ValueError, KeyError, TypeError):
            return None  # unreadable: this worker's own calibration is used, as without sharing

    def _write_shared(self, device_key: str, calibration: DeviceCalibration) -> None:
        path = self._shared_path(device_key)
        if path is None or path.exists():
            return
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            partial = path.with_name(f".{path.name}.{os.getpid()}")
            partial.write_text(json.dumps(calibration.to_exact_json()))
            try:
                os.link(partial, path)  # never replaces a calibration another worker wrote first
            except FileExistsError:
                pass
            finally:
                partial.unlink()
        except OSError:
            pass  # not shared: the other workers calibrate for themselves, as without sharing

    def __len__(self) -> int:
        with self._lock:
            return len(self._by_device)


XDIST_RUN_ENV = "PYTEST_XDIST_TESTRUNUID"  # set by xdist in every worker of one run (the same value)


def shared_dir_for_run(base: Path, environ: dict[str, str] | None = None) -> Path | None:
    """The folder where the workers of this xdist run share calibrations (None outside xdist)."""
    run = (os.environ if environ is None else environ).get(XDIST_RUN_ENV, "")
    return base / f"calibrations-{run}" if run.isalnum() else None
