"""What device timing needs from a runtime: the `DeviceTimer` protocol, how big its L2 flush is, and the `Offset`
(the event bracket's cost) its caches keep.

A device timer queues work on the stream the kernel uses: timing events, a delay kernel, an L2 flush and
(optionally) the runtime's smallest kernel and a profiler hook. `toolchains.torch_device_timer.TorchDeviceTimer`
implements it over `torch.cuda` (CUDA or ROCm builds of torch alike); the unit tests simulate one.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from .policy import significant

FLUSH_ENV = "DCUOPT_L2_FLUSH"  # read (default) | write | none
FLUSH_MODES = ("read", "write", "none")
FLUSH_FACTOR = 2.0  # flush buffer = this x L2
FALLBACK_L2_BYTES = 128 * 1024 * 1024  # when the L2 size cannot be read: flush 256 MiB (Triton's size)


@dataclass
class Offset:
    """The event bracket's own cost, subtracted from every sample when `applied`."""

    applied: bool
    seconds: float = 0.0
    reason: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        if not self.applied:
            return {"applied": False, "reason": self.reason, **self.details}
        return {"applied": True, "offset_us": significant(self.seconds * 1e6), **self.details}

    def reused(self) -> Offset:
        """This offset, marked as taken from a cache."""
        return Offset(self.applied, self.seconds, self.reason, {**self.details, "reused": True})


class Activity(NamedTuple):
    """One device activity (a kernel, copy or memset) as the profiler recorded it."""

    name: str
    seconds: float  # its duration on the device
    start_s: float = 0.0  # its start, on the profiler's clock (only differences between activities mean anything)

    @property
    def end_s(self) -> float:
        return self.start_s + self.seconds


class Event(Protocol):
    def record(self) -> None: ...

    def elapsed_time(self, end: Any) -> float: ...  # milliseconds, like torch.cuda.Event


class DeviceTimer(Protocol):
    """What device timing needs from a runtime.

    Subclass it to inherit the defaults of the optional members: no tiny kernel, no profiler, and no
    caches (every measurement then calibrates the bracket again).
    """

    timer: str  # e.g. "cuda events"
    l2_bytes: int
    l2_source: str
    # Per-process caches of the bracket-cost calibrations (see timing.offset); None: calibrate every time.
    offset_cache: dict[int, tuple[Any, Offset]] | None = None  # id(bound call) -> (weakref to it, Offset)
    bracket_cache: dict[str, Offset] | None = None  # "offset" -> Offset (the cost does not depend on the kernel)
    # The delay kernel's rate: "cycles_per_s", "measured_by" (pid) and "handed_over" (timing.calibration).
    hiding_cache: dict[str, Any] | None = None
    # Names of the flush/marker activities each synchronizing sample queues (see timing.sync), per flush mode.
    activity_cache: dict[str, list[str]] | None = None
    profiler_problem: str = ""  # why the last profile_activities returned None ("" = no profiler hook at all)

    def event(self) -> Event: ...

    def synchronize(self) -> None: ...

    def sleep(self, cycles: int) -> bool: ...  # enqueue a delay kernel; False when unsupported

    def flush(self) -> None: ...

    def flush_info(self) -> dict[str, Any]: ...

    def telemetry(self) -> dict[str, Any]: ...

    def tiny_kernel(self) -> bool:
        """Enqueue the runtime's smallest kernel; False when it has none."""
        return False

    def profile_activities(self, body: Callable[[], Any]) -> list[Activity] | None:
        """Every device activity `body` queues (it is run, then the device synchronized), in start order; [] when
        the profiler ran and saw none; None when this runtime cannot record device activity (then
        `profiler_problem` says why, where it knows)."""
        return None

    def profile_device(self, body: Callable[[], Any]) -> list[tuple[str, float]] | None:
        """[(name, seconds)] of every device activity `body` queues, in start order; None when this runtime
        cannot record device activity, or recorded none."""
        found = self.profile_activities(body)
        return [(activity.name, activity.seconds) for activity in found] if found else None


def choose_flush_mode(chosen: str | None = "") -> str:
    """The L2 flush before cold samples: `chosen` (--dcuopt-l2-flush), else $DCUOPT_L2_FLUSH, else read."""
    mode = (chosen or os.environ.get(FLUSH_ENV, "")).strip().lower() or "read"
    if mode not in FLUSH_MODES:
        raise ValueError(f"L2 flush {mode!r} is not a flush mode; use one of {', '.join(FLUSH_MODES)} "
                         "(read: clean cold L2, the default; write: nvbench-style memset; none: no flush), via "
                         f"--dcuopt-l2-flush or ${FLUSH_ENV}")
    return mode


def flush_bytes_for(l2_bytes: int | None) -> tuple[int, str]:
    """Bytes to stream through before a cold sample, and where the L2 size came from."""
    if l2_bytes and l2_bytes > 0:
        return int(FLUSH_FACTOR * l2_bytes), f"{FLUSH_FACTOR:g} x the device's L2 ({l2_bytes} bytes)"
    return int(FLUSH_FACTOR * FALLBACK_L2_BYTES), (f"L2 size unreadable: fallback {FLUSH_FACTOR:g} x "
                                                    f"{FALLBACK_L2_BYTES // 2**20} MiB")
