"""The `--stats` kernel table of hipprof / rocprof (`*.hipkernel.csv`, rocprof `results.stats.csv`):
`"Name","Calls","TotalDurationNs","AverageNs","Percentage"`. The plugin reads per-dispatch counters only; the parser
is kept with the tests that check the recorded table and fuzz it."""
from __future__ import annotations

import csv
from dataclasses import dataclass

from pytest_dcuopt.profile.hipprof import PmcFormatError


@dataclass(frozen=True)
class KernelStat:
    name: str
    calls: int
    total_ns: float
    average_ns: float
    percentage: float


def parse_stats_csv(text: str) -> list[KernelStat]:
    """`*.hipkernel.csv` / rocprof `results.stats.csv` (extra rocprofv3 columns are ignored)."""
    reader = csv.DictReader(text.splitlines())  # splitlines: a bare \r ends a line, not the parse
    try:
        return [KernelStat(r["Name"], int(float(r["Calls"])), float(r["TotalDurationNs"]), float(r["AverageNs"]),
                           float(r["Percentage"])) for r in reader if r.get("Name")]
    except (KeyError, TypeError, ValueError, OverflowError) as exc:  # a missing column, a short row, not a number
        raise PmcFormatError(f"not a kernel stats CSV (Name, Calls, TotalDurationNs, AverageNs, Percentage): "
                             f"{type(exc).__name__}: {exc}") from None
