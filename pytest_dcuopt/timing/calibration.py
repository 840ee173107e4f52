"""Calibrations that depend on the device, not on the kernel: measured once per device per session.

Each branch runs in a worker process of its own, and each worker used to calibrate again: the event
bracket's cost (`offset.calibrate_bracket`, hundreds of bracketed tiny kernels) and the delay kernel's rate
(`bracket.calibrate_hiding`). Now the first worker on a device measures them and its `time` reply carries
them (`DeviceCalibration`); the pytest process keeps the latest per device (`CalibrationStore`, keyed by the
device's timing-lock name, i.e. the physical GPU) and hands them to later workers on that device in their
`time` request; a worker seeds its backend's caches with them (`seed_backend`). Only the first branch pays.

What is shared keeps the --dcuopt-event-offset semantics: `calibrated` uses the handed-over bracket cost,
`profiler` pairs each bound call with its own profiler records (per kernel: never shared), `none` subtracts
nothing. A calibration from another device or flush mode is refused and measured afresh; the record says which
happened (`timing.event_offset.handed_over`, `timing.launch_hiding.cycles_per_us_from`,
`timing.calibration_handover`).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from typing import Any, Protocol, runtime_checkable

from .backend import DeviceBackend
from .offset import Offset


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


@runtime_checkable
class CalibratedRuntime(Protocol):
    """A worker runtime that can take a calibration from an earlier worker and give its own back."""

    def accept_calibration(self, calibration: DeviceCalibration) -> None: ...

    def calibration(self) -> DeviceCalibration | None: ...


def export_calibration(backend: DeviceBackend, device: str, flush_mode: str) -> DeviceCalibration | None:
    """The backend's calibrations (None when it has none yet)."""
    hiding = backend.hiding_cache or {}
    bracket = (backend.bracket_cache or {}).get("offset")
    rate = hiding.get("cycles_per_s")
    if rate is None and bracket is None:
        return None
    return DeviceCalibration(device, flush_mode, rate, str(hiding.get("measured_by", "")), bracket)


def seed_backend(backend: DeviceBackend, calibration: DeviceCalibration, device: str,
                 flush_mode: str) -> dict[str, Any]:
    """Fill the backend's empty calibration caches from `calibration`; what was taken, or why nothing was."""
    if calibration.device != device or calibration.flush_mode != flush_mode:
        return {"accepted": False,
                "reason": (f"the calibration offered was measured on {calibration.device!r} with L2 flush "
                           f"{calibration.flush_mode!r}, this worker times on {device!r} with {flush_mode!r}: "
                           "measured afresh")}
    taken = []
    if backend.hiding_cache is not None and calibration.cycles_per_s and "cycles_per_s" not in backend.hiding_cache:
        backend.hiding_cache.update(cycles_per_s=calibration.cycles_per_s, measured_by=calibration.rate_measured_by,
                                    handed_over=True)
        taken.append("delay kernel rate")
    if backend.bracket_cache is not None and calibration.bracket is not None and "offset" not in backend.bracket_cache:
        bracket = calibration.bracket
        backend.bracket_cache["offset"] = replace(bracket, details={**bracket.details, "handed_over": True})
        taken.append("event bracket cost")
    bracket_by = str(calibration.bracket.details.get("measured_by", "")) if calibration.bracket is not None else ""
    return {"accepted": True, "taken": taken, "measured_by": calibration.rate_measured_by or bracket_by}


class CalibrationStore:
    """The pytest process's side: the latest calibration per device key, handed to the next worker there.

    Thread-safe (builds run in threads; a timing request may come from any of them in the future)."""

    def __init__(self) -> None:
        self._by_device: dict[str, DeviceCalibration] = {}
        self._lock = threading.Lock()

    def get(self, device_key: str) -> DeviceCalibration | None:
        with self._lock:
            return self._by_device.get(device_key)

    def keep(self, device_key: str, calibration: DeviceCalibration | None) -> None:
        if calibration is None:
            return
        with self._lock:
            self._by_device[device_key] = calibration

    def __len__(self) -> int:
        with self._lock:
            return len(self._by_device)
