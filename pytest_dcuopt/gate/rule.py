"""The gate's verdicts and the dual rule that gives them: a change must be statistically significant (the
interval of gate.stats excludes a ratio of 1) *and* practically significant (larger than a relative threshold and an
absolute floor) before it is called SLOW or FAST."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from .stats import Change

FAST = "FAST"
SAME = "SAME"
SLOW = "SLOW"
AMBIGUOUS = "AMBIGUOUS"  # the interval straddles the practical margin: re-measured, then reported without failing
REFUSED = "REFUSED"  # the two measurements are not comparable (device, toolchain, dims, timing mode, no samples)
NEW = "NEW"  # the branch is not in the baseline run
NOT_TIMED = "NOT TIMED"  # this run did not time the branch (skipped, deselected, failed before timing)
VERDICTS = (FAST, SAME, SLOW, AMBIGUOUS, REFUSED, NEW, NOT_TIMED)


# The default smallest relative change that counts, by timer. Device events repeat within +/-0.7% between
# measurements of a 87 us kernel on an H200 (68 A/A pairs, docs/performance.md), so 2% keeps false alarms out while
# a 5% regression is caught; a host clock on a shared CPU drifts by several percent between runs.
DEVICE_THRESHOLD = 0.02
HOST_THRESHOLD = 0.05


def device_timed(timing: Mapping[str, Any]) -> bool:
    """Whether a timing record comes from device events or the profiler's device records (not a host clock)."""
    timer = str(timing.get("timer") or "")
    return "events" in timer or "activity records" in timer


@dataclass(frozen=True)
class GateRule:
    """The rule's parameters (options: --dcuopt-compare-threshold, -floor-us, -retries)."""

    threshold: float | None = None  # smallest relative change that counts; None: by timer (DEVICE/HOST_THRESHOLD)
    floor_us: float = 1.0  # ... and smallest absolute change, in microseconds
    retries: int = 2  # re-measurements of an AMBIGUOUS branch
    confidence: float = 0.95  # of the interval (two-sided)
    clock_tolerance: float = 0.05  # SM clocks of the two runs further apart than this are flagged
    # Fewest samples a side the rule rules on (--dcuopt-min-samples): the interval of 3 samples a side is as wide as
    # their range, and a shared CPU's slowest sample decides it; below this the verdict is AMBIGUOUS, saying why.
    min_samples: int = 10

    def threshold_for(self, device: bool) -> float:
        """The relative threshold: the one given, else the default of the timer kind."""
        if self.threshold is not None:
            return self.threshold
        return DEVICE_THRESHOLD if device else HOST_THRESHOLD

    def margin(self, before_median_ms: float, device: bool = False) -> float:
        """The practical margin relative to the baseline's median: the larger of the threshold and the floor."""
        threshold = self.threshold_for(device)
        if before_median_ms <= 0:
            return threshold
        return max(threshold, self.floor_us * 1e-3 / before_median_ms)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "threshold_device": self.threshold_for(True),
                "threshold_host": self.threshold_for(False)}


def too_few_samples(before_n: int, after_n: int, rule: GateRule) -> str | None:
    """Why the rule may not rule on this many samples (the reason of an AMBIGUOUS verdict), or None when it may."""
    short = [f"{side} has {n}" for side, n in (("the baseline", before_n), ("this run", after_n))
             if n < rule.min_samples]
    if not short:
        return None
    return (f"too few samples to rule: {' and '.join(short)}, fewer than the minimum of {rule.min_samples} "
            "(--dcuopt-min-samples); sampling stopped at its time cap first. Give the run with too few a larger "
            "--dcuopt-max-time (a baseline with too few must be run again), or make a sample cheaper (on the CPU, a "
            "smaller cache flush: $DCUOPT_CPU_FLUSH_MB); a lower --dcuopt-min-samples lets the gate rule on fewer "
            "samples and flag drift as a change more often")


def decide(change: Change, rule: GateRule, device: bool = False) -> str:
    """SLOW / FAST: significant and beyond the margin; SAME: the whole interval within the margin; else AMBIGUOUS.

    The margin is symmetric in ratio: SLOW when after/before exceeds 1 + margin, FAST when before/after does. A
    significant change smaller than the margin whose interval stays inside it is SAME (real, too small to matter).
    An estimate beyond the margin whose interval still includes 1 is AMBIGUOUS, as is an interval that reaches past
    the margin while the estimate does not.
    """
    limit = 1 + rule.margin(change.before_median_ms, device)
    if change.ratio_low > 1 and change.ratio > limit:
        return SLOW
    if change.ratio_high < 1 and change.ratio < 1 / limit:
        return FAST
    if 1 / limit <= change.ratio_low and change.ratio_high <= limit:
        return SAME
    return AMBIGUOUS
