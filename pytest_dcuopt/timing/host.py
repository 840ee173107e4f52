"""Host-clock timing for kernels that run on the CPU."""
from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .policy import Samples, TimingPolicy, sample_until_stable


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


class CacheFlusher:
    """Evicts the CPU caches by streaming writes over a buffer twice the last-level cache."""

    def __init__(self) -> None:
        self.bytes = 2 * last_level_cache_bytes()
        self._buffer = np.zeros(self.bytes // 8, dtype=np.float64)

    def __call__(self) -> None:
        self._buffer += 1.0


def between_calls(launch: Any) -> tuple[Callable[[], None], Callable[[], None]]:
    """What to do before and after each call, outside the timed window: the launch's own `prepare` and `finish` when
    it has them (run/worker.py `TimedCalls`: new inputs before, the checked calls' snapshots after), else nothing."""
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
    extra = {"flush_bytes": flush.bytes} if flush else {}
    return Samples(seconds, "host perf_counter_ns", "cold" if flush else "hot", reason, warmup_calls, extra)
