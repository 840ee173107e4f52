"""Side measurements recorded beside the cold samples, never mixed into them.

* `seed_method`: the original skill's number (one event pair around 20 back-to-back calls after 10
  warm-ups, no flush), in `extra["seed_method"]`;
* `launch_overhead`: the host cost of one `solve` call and the latency that leaks into an unhidden
  single-call measurement, in `extra["launch_overhead"]`;
* `describe_samples`: how hot and side sample sets are summarised in the record.
"""
from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from typing import Any

from .device_timer import DeviceTimer
from .policy import significant, summarize

SEED_WARMUP, SEED_REPEAT = 10, 20
SIDE_FIGURES_OFF = ("not measured: side figures (hot, hot_rotated, seed_method, launch_overhead) are opt-in "
                    "(--dcuopt-side-figures); interleaved A/B rounds never take them")


def absent_side_figure(**extra: Any) -> dict[str, Any]:
    """What the record holds for a side figure that was not measured: no samples, and why."""
    return {"n": 0, "skipped": SIDE_FIGURES_OFF, **extra}


def describe_samples(seconds: Sequence[float], **extra: Any) -> dict[str, Any]:
    """median/IQR/min/n in ms plus the raw samples, for hot and side measurements."""
    if not seconds:
        return {"n": 0, **extra}
    summary = summarize(seconds)
    return {"median_ms": significant(summary.median_ms), "iqr_ms": significant(summary.iqr_ms),
            "min_ms": significant(summary.min_ms), "max_ms": significant(summary.max_ms), "n": summary.rounds,
            "rel_spread": significant(summary.rel_spread), **extra,
            "samples_ms": [significant(s * 1e3) for s in seconds]}


def seed_method(launch: Callable[[], None], device_timer: DeviceTimer, warmup: int = SEED_WARMUP,
                repeat: int = SEED_REPEAT) -> dict[str, Any]:
    """The original skill's benchmark: one event pair around `repeat` back-to-back calls, no flush; it
    reported this mean as its average, median, min and max alike."""
    for _ in range(warmup):
        launch()
    device_timer.synchronize()
    start, end = device_timer.event(), device_timer.event()
    start.record()
    for _ in range(repeat):
        launch()
    end.record()
    device_timer.synchronize()
    mean_ms = start.elapsed_time(end) / repeat
    return {"mean_ms": significant(mean_ms), "warmup": warmup, "repeat": repeat,
            "what": "one event pair around back-to-back calls, no L2 flush (the original benchmark.py)"}


def launch_overhead(launch: Callable[[], None], device_timer: DeviceTimer, host: Sequence[float],
                    cold_median_s: float, calls: int = 10) -> dict[str, Any]:
    """Host cost of one call (`host`: from `bracket.host_launch_seconds`), and how much of it an unhidden
    single-call event pair would count."""
    unhidden = []
    for _ in range(calls):
        device_timer.flush()
        device_timer.synchronize()  # the GPU is idle: the start event fires before the launch arrives
        start, end = device_timer.event(), device_timer.event()
        start.record()
        launch()
        end.record()
        device_timer.synchronize()
        unhidden.append(start.elapsed_time(end) * 1e-3)
    host_sorted = sorted(host)
    unhidden_median = statistics.median(unhidden)
    return {"host_call_us_median": significant(statistics.median(host_sorted) * 1e6),
            "host_call_us_p90": significant(host_sorted[min(len(host_sorted) - 1, int(0.9 * len(host_sorted)))] * 1e6),
            "unhidden_single_call_ms": significant(unhidden_median * 1e3),
            "unhidden_minus_cold_us": significant((unhidden_median - cold_median_s) * 1e6),
            "what": "host_call = ctypes solve() + launch + error check on the host; unhidden = one event pair "
                    "around one call on an idle GPU (flushed), which counts the launch latency the delay kernel hides"}
