"""Host-clock timing for kernels that run on the CPU, and the cache flush before each cold sample.

The flush must evict what the kernel touched, so it streams over more bytes than the caches hold; every byte costs
time out of the sampling budget. The reported last-level cache can be far larger than what one core really holds
(a VM may report the host's whole L3, 260 MiB, where one core reaches a 32 MiB slice), so the size is the smaller of
the reported cache and an effective one measured once per machine boot, times a margin; $DCUOPT_CPU_FLUSH_MB sets it.
"""
from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .policy import Samples, TimingPolicy, sample_until_stable

FLUSH_ENV = "DCUOPT_CPU_FLUSH_MB"  # the flush size in MiB, instead of the measured one
FLUSH_MARGIN = 2  # the flush streams this many times the cache it evicts (caches are not strictly LRU)
PROBE_FILE_ENV = "DCUOPT_CPU_CACHE_PROBE"  # where the measured curve is kept (default: in the temp directory)
PROBE_MIN_BYTES = 256 * 1024
PROBE_MAX_BYTES = 1024 * 1024 * 1024
PROBE_REACH = 4
PROBE_PASSES = 3  # per size, the fastest pass counts: a busy neighbour only ever slows a pass down
STEP = 1.5  # the slowest size must cost this many times the fastest per byte for a step to be read


def last_level_cache_bytes(default: int = 32 * 1024 * 1024) -> int:
    """Size of the largest CPU cache from sysfs (fallback: 32 MiB)."""
    sizes = []
    for index in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*/size"):
        text = index.read_text().strip().upper()
        scale = {"K": 1024, "M": 1024 * 1024}.get(text[-1:], 1)
        digits = text.rstrip("KM")
        if digits.isdigit():
            sizes.append(int(digits) * scale)
    return max(sizes, default=default)


def effective_cache_bytes(curve: Sequence[tuple[int, float]]) -> int | None:
    """From a probe curve (buffer bytes ascending, cost per byte of a pass over it): the largest buffer the caches
    still hold, the last size before the first one that costs at least halfway from the fastest to the slowest;
    None when the curve shows no step (the slowest is less than STEP times the fastest: the cache is beyond the
    probe, or the machine was too busy to tell) or steps at its first size."""
    costs = [cost for _, cost in curve]
    if len(curve) < 2 or max(costs) < STEP * min(costs):
        return None
    halfway = (min(costs) + max(costs)) / 2
    held = [size for size, _ in curve[:next(i for i, cost in enumerate(costs) if cost >= halfway)]]
    return held[-1] if held else None


def probe_curve(max_bytes: int, clock: Callable[[], float] = time.perf_counter) -> list[tuple[int, float]]:
    """Seconds per byte of an in-place add over buffers from PROBE_MIN_BYTES to `max_bytes`, doubling: the same
    streaming access as the flush. Each size's fastest of PROBE_PASSES passes (after one untimed pass)."""
    curve: list[tuple[int, float]] = []
    size = PROBE_MIN_BYTES
    while size <= max_bytes:
        buffer = np.zeros(size // 8, dtype=np.float64)
        buffer += 1.0
        best = float("inf")
        for _ in range(PROBE_PASSES):
            begin = clock()
            buffer += 1.0
            best = min(best, clock() - begin)
        curve.append((size, best / size))
        size *= 2
    return curve


@dataclass(frozen=True)
class FlushSize:
    bytes: int
    source: str  # how the size was chosen, for the timing record


def probe_file() -> Path:
    return Path(os.environ.get(PROBE_FILE_ENV) or Path(tempfile.gettempdir()) / "pytest_dcuopt-cpu-cache.json")


def machine_key(reported: int) -> str:
    """What a kept probe is valid for: this boot of this machine (a VM may move to another host between boots)."""
    boot = Path("/proc/sys/kernel/random/boot_id")
    boot_id = boot.read_text().strip() if boot.exists() else "unknown-boot"
    return f"{boot_id}|{reported}"


def measured_cache_bytes(reported: int) -> tuple[int | None, list[tuple[int, float]]]:
    """The effective cache and its curve: kept from an earlier probe of this boot, else probed now and kept. The
    probe reaches PROBE_REACH times the reported cache, so its slowest sizes are memory's speed, not a cache's."""
    path, key = probe_file(), machine_key(reported)
    try:
        kept = json.loads(path.read_text())
        if kept.get("key") == key:
            curve = [(int(size), float(cost)) for size, cost in kept["curve"]]
            return effective_cache_bytes(curve), curve
    except (OSError, ValueError, KeyError, TypeError):
        pass  # none kept yet, or unreadable: probe again
    curve = probe_curve(min(PROBE_MAX_BYTES, max(PROBE_REACH * reported, 64 * 1024 * 1024)))
    try:
        partial = path.with_name(f"{path.name}.{os.getpid()}")
        partial.write_text(json.dumps({"key": key, "curve": curve}))
        partial.replace(path)  # atomic: a concurrent worker reads the old file or the new one
    except OSError:
        pass  # not kept: the next process probes again
    return effective_cache_bytes(curve), curve


def choose_flush_size(reported: int | None = None) -> FlushSize:
    """$DCUOPT_CPU_FLUSH_MB, else FLUSH_MARGIN x the smaller of the reported last-level cache and the measured one."""
    given = os.environ.get(FLUSH_ENV, "").strip()
    if given:
        try:
            mib = float(given)
        except ValueError:
            mib = -1.0
        if not mib > 0:
            raise ValueError(f"${FLUSH_ENV}={given!r} is not a positive number of MiB: give the bytes the CPU flush "
                             f"streams before each cold sample (e.g. {FLUSH_ENV}=64), or unset it to measure the "
                             "effective cache")
        return FlushSize(int(mib * 1024 * 1024), f"${FLUSH_ENV}={given}")
    reported = last_level_cache_bytes() if reported is None else reported
    measured, _ = measured_cache_bytes(reported)
    mib = 1024 * 1024
    if measured is None or measured >= reported:
        why = "no step in the probe" if measured is None else f"{measured / mib:g} MiB measured"
        return FlushSize(FLUSH_MARGIN * reported,
                         f"{FLUSH_MARGIN} x the reported last-level cache ({reported / mib:g} MiB; {why})")
    return FlushSize(FLUSH_MARGIN * measured,
                     f"{FLUSH_MARGIN} x the measured effective cache ({measured / mib:g} MiB, below the reported "
                     f"{reported / mib:g} MiB; {probe_file()})")


_CHOSEN: list[FlushSize] = []  # one choice per process: the probe's file is read once


def flush_size() -> FlushSize:
    if not _CHOSEN:
        _CHOSEN.append(choose_flush_size())
    return _CHOSEN[0]


class CacheFlusher:
    """Evicts the CPU caches by streaming writes over a buffer of `flush_size()` bytes."""

    def __init__(self) -> None:
        size = flush_size()
        self.bytes, self.source = size.bytes, size.source
        self._buffer = np.zeros(self.bytes // 8, dtype=np.float64)
        self()  # the first pass maps every page (a fresh 520 MiB took most of a 0.5 s budget): before sampling starts

    def __call__(self) -> None:
        self._buffer += 1.0


def between_calls(launch: Any) -> tuple[Callable[[], None], Callable[[], None]]:
    """What to do before and after each call, outside the timed window: the launch's own `prepare` and `finish` when
    it has them (run/kernel_calls.py `TimedCalls`: new inputs before, the checked calls' snapshots after), else
    nothing."""
    prepare, finish = getattr(launch, "prepare", None), getattr(launch, "finish", None)
    if callable(prepare) and callable(finish):
        return prepare, finish
    return _nothing, _nothing


def _nothing() -> None:
    return None


def measure_host(launch: Callable[[], None], policy: TimingPolicy,
                 between: tuple[Callable[[], None], Callable[[], None]] | None = None) -> Samples:
    """Warm up by time, then time single calls with perf_counter_ns until the stopping rule holds. Every call, warm-up
    included, is bracketed alike by `between` (default: `between_calls(launch)`), untimed."""
    clock = time.perf_counter
    flush = CacheFlusher() if policy.cold else None
    prepare, finish = between or between_calls(launch)
    warmup_calls, start = 0, clock()
    while clock() - start < policy.warmup_s or warmup_calls < 1:
        prepare()
        launch()
        finish()
        warmup_calls += 1

    def one_sample() -> float:
        prepare()
        if flush is not None:
            flush()
        begin = time.perf_counter_ns()
        launch()
        took = (time.perf_counter_ns() - begin) * 1e-9
        finish()
        return took

    seconds, reason = sample_until_stable(one_sample, clock, policy)
    extra = {"flush_bytes": flush.bytes, "flush_source": flush.source} if flush else {}
    return Samples(seconds, "host perf_counter_ns", "cold" if flush else "hot", reason, warmup_calls, extra)
