"""`perf stat -x,` output (CSV: value, unit, event, run time, % enabled, metric value, metric unit), normalized.

The CPU target enables the counters only around the one profiled `solve` call (`perf stat -D -1 --control
fifo:ctl,ack`): the whole output is the kernel under test. A hardware event the machine cannot count reads
`<not supported>` (a VM without a PMU) or `<not counted>`; those are reported, never read as 0.
"""
from __future__ import annotations

import csv
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from .kernels import KernelRow
from .metrics import Metric

DEFAULT_EVENTS: tuple[str, ...] = ("task-clock", "instructions", "cycles", "cache-references", "cache-misses",
                                   "branch-misses", "page-faults")
HARDWARE_EVENTS = ("instructions", "cycles")
_PERF_NOISE = re.compile(r"Events (?:enabled|disabled)")
_UNSUPPORTED = ("<not supported>", "<not counted>")


@dataclass
class PerfStat:
    counters: dict[str, float] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)
    unsupported: dict[str, str] = field(default_factory=dict)  # event -> "<not supported>" / "<not counted>"


def parse_perf_stat(text: str) -> PerfStat:
    stat = PerfStat()
    cleaned = _PERF_NOISE.sub("\n", text)
    for record in csv.reader(cleaned.splitlines()):  # splitlines: a bare \r ends a line, not the parse
        if len(record) < 3 or record[0].startswith("#") or not record[2]:
            continue
        value, unit, event = record[0].strip(), record[1].strip(), record[2].strip()
        if value in _UNSUPPORTED:
            stat.unsupported[event] = value
            continue
        try:
            stat.counters[event] = float(value)
        except ValueError:
            continue
        stat.units[event] = unit
    return stat


def as_row(stat: PerfStat, kernel: str = "solve") -> KernelRow:
    return KernelRow(kernel, 0, dict(stat.counters), {f"unit:{k}": v for k, v in stat.units.items()})


def normalize(stat: PerfStat, range_wall_s: float | None) -> list[Metric]:
    metrics = []
    if range_wall_s is not None:
        metrics.append(Metric("kernel_time_s", range_wall_s, "host wall clock of the profiled range (one call)"))
    clock = stat.counters.get("task-clock")
    if clock is not None:
        scale = {"msec": 1e-3, "usec": 1e-6, "nsec": 1e-9, "sec": 1.0}.get(stat.units.get("task-clock", "msec"), 1e-3)
        metrics.append(Metric("task_clock_s", clock * scale, "perf task-clock (all threads)"))
    for event, name in (("instructions", "instructions"), ("cycles", "cycles")):
        if event in stat.counters:
            metrics.append(Metric(name, stat.counters[event], f"perf {event}"))
    return metrics


def missing_hardware(stat: PerfStat, events: Sequence[str] = HARDWARE_EVENTS) -> list[str]:
    return [f"{e} {stat.unsupported[e]}" for e in events if e in stat.unsupported]
