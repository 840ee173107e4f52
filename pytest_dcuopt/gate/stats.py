"""How much slower or faster, with an interval, from two runs' raw samples.

The change is a ratio `after / before`: the Hodges-Lehmann estimate on log times (the median of every pairwise
difference `log a - log b`, exponentiated) with the distribution-free confidence interval of the Mann-Whitney rank
statistic (normal approximation, close to exact from about ten samples a side). On log times a slowdown that scales
every sample shows as one number whatever the spread of either run, and the interval is a ratio too, never below 0.
It uses both sample sets jointly and assumes no distribution; unlike a bootstrap it is deterministic, so a verdict can
be re-derived from the two state.json files. What it cannot see is drift *between* the two runs (another day,
another clock, a busier machine): that is what the practical margin of the rule (gate.rule) is for.
"""
from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

# Pairwise differences grow as n * m: beyond this many samples a side, take every k-th sample (in time order, so
# the thinned set still spans the whole measurement).
MAX_SAMPLES_PER_SIDE = 2000
METHOD = "Hodges-Lehmann ratio on log times, Mann-Whitney interval"


@dataclass(frozen=True)
class Change:
    """after / before: the estimated ratio, its confidence interval, and the two medians (milliseconds)."""

    before_median_ms: float
    after_median_ms: float
    ratio: float
    ratio_low: float
    ratio_high: float
    confidence: float
    before_n: int
    after_n: int

    @property
    def rel(self) -> float:
        """The estimated relative change (+0.10 = 10% slower)."""
        return self.ratio - 1

    @property
    def rel_low(self) -> float:
        return self.ratio_low - 1

    @property
    def rel_high(self) -> float:
        return self.ratio_high - 1

    @property
    def shift_ms(self) -> float:
        """after - before, of the medians."""
        return self.after_median_ms - self.before_median_ms

    def to_json(self) -> dict[str, Any]:
        return {"before_median_ms": _sig(self.before_median_ms), "after_median_ms": _sig(self.after_median_ms),
                "ratio": _sig(self.ratio), "ratio_interval": [_sig(self.ratio_low), _sig(self.ratio_high)],
                "change": _sig(self.rel), "change_interval": [_sig(self.rel_low), _sig(self.rel_high)],
                "confidence": self.confidence, "samples": [self.before_n, self.after_n], "method": METHOD}


def ratio_interval(before_ms: Sequence[float], after_ms: Sequence[float], confidence: float = 0.95) -> Change:
    """The Hodges-Lehmann ratio `after / before` and its `confidence` interval (two-sided)."""
    if len(before_ms) < 2 or len(after_ms) < 2:
        raise ValueError(f"need at least 2 samples a side to compare, got {len(before_ms)} before and "
                         f"{len(after_ms)} after")
    if min(before_ms) <= 0 or min(after_ms) <= 0:
        raise ValueError(f"times must be positive to compare as ratios; the fastest sample was "
                         f"{min(before_ms):.6g} ms before and {min(after_ms):.6g} ms after (an over-corrected "
                         "event offset? see the timing record's event_offset)")
    before = _thin(np.log(np.asarray(before_ms, dtype=np.float64)))
    after = _thin(np.log(np.asarray(after_ms, dtype=np.float64)))
    n, m = len(after), len(before)
    differences = np.subtract.outer(after, before).ravel()
    total = differences.size
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    # c: how many of the sorted differences lie below the interval (the Mann-Whitney critical value).
    c = math.floor(total / 2 - z * math.sqrt(n * m * (n + m + 1) / 12))
    low_index = max(0, c - 1)
    high_index = min(total - 1, total - c)
    middle = ((total - 1) // 2, total // 2)
    picked = np.partition(differences, sorted({low_index, high_index, *middle}))
    return Change(
        before_median_ms=float(statistics.median(before_ms)), after_median_ms=float(statistics.median(after_ms)),
        ratio=math.exp((picked[middle[0]] + picked[middle[1]]) / 2), ratio_low=math.exp(picked[low_index]),
        ratio_high=math.exp(picked[high_index]), confidence=confidence, before_n=len(before_ms),
        after_n=len(after_ms))


def _thin(values: np.ndarray) -> np.ndarray:
    if len(values) <= MAX_SAMPLES_PER_SIDE:
        return values
    step = math.ceil(len(values) / MAX_SAMPLES_PER_SIDE)
    return values[::step]


def _sig(value: float) -> float:
    return float(f"{value:.6g}")
