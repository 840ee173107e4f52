"""How long to measure, when to stop, and what the samples say (shared by every timer)."""
from __future__ import annotations

import math
import os
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class TimingPolicy:
    """The measurement budget. Warm-up is by time, sampling stops on noise or on the time cap."""

    warmup_s: float = 0.05  # run the kernel (untimed) at least this long first
    min_samples: int = 10
    max_samples: int = 2000
    target_rel_spread: float = 0.01  # stop once the median's 95% CI half-width / median is below this
    min_time_s: float = 0.1  # ... and at least this much sampled time
    max_time_s: float = 2.0  # hard cap on sampling wall time per branch
    cold: bool = True  # flush caches before each sample where the runtime can
    l2_flush: str = ""  # device timing: read | write | none ("" = $DCUOPT_L2_FLUSH, else read)
    event_offset: str = ""  # device timing: calibrated | profiler | none ("" = $DCUOPT_EVENT_OFFSET, else calibrated)
    timing_method: str = ""  # device timing: auto | async | sync ("" = $DCUOPT_TIMING_METHOD, else auto)
    # Device timing: also measure the side figures (hot, hot-rotated, the original method, launch overhead). The
    # plugin turns them off unless --dcuopt-side-figures (they cost time every branch); direct callers of
    # measure_device (tools/device/*) keep them by default.
    side_figures: bool = True

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


METHOD_ENV = "DCUOPT_TIMING_METHOD"  # auto (default) | async | sync
METHODS = ("auto", "async", "sync")
OK = "ok"
TOO_FEW = "too few clean samples"


def choose_method(chosen: str = "") -> str:
    """How device samples are taken: `chosen` (the policy's timing_method), else $DCUOPT_TIMING_METHOD, else auto."""
    method = (chosen or os.environ.get(METHOD_ENV, "")).strip().lower() or "auto"
    if method not in METHODS:
        raise ValueError(f"timing method {method!r} is not a method; use `auto` (the default: detect a solve that "
                         "synchronizes or allocates during warm-up), `async` (launch hiding with a delay kernel) or "
                         "`sync` (one call per sample on an idle GPU, kernel time from the profiler), via "
                         f"${METHOD_ENV}")
    return method


def sample_quality(clean: int, policy: TimingPolicy, stop_reason: str) -> dict[str, Any]:
    """Whether the samples may be read as a measurement: `ok`, or `too few clean samples` (fewer than
    `min_samples` clean ones when sampling stopped, at the time cap), with the figures that say so."""
    if clean >= policy.min_samples:
        return {"quality": OK, "clean_samples": clean}
    return {"quality": TOO_FEW, "clean_samples": clean,
            "quality_detail": (f"{clean} clean samples, fewer than min_samples ({policy.min_samples}), when sampling "
                               f"stopped ({stop_reason}): the median is not a measurement to compare; raise "
                               "--dcuopt-max-time, or find what delays the samples (timing.sync_detected, "
                               "timing.late_samples_discarded)")}


@dataclass
class Samples:
    """Raw per-call times in seconds, plus how they were taken."""

    seconds: list[float]
    timer: str  # e.g. "host perf_counter_ns", "cuda events"
    mode: str  # "cold" (caches flushed per sample) or "hot" (back-to-back)
    stop_reason: str
    warmup_calls: int
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Summary:
    """Robust statistics of one sample set, in milliseconds."""

    median_ms: float
    iqr_ms: float
    min_ms: float
    max_ms: float
    mean_ms: float
    ci95_ms: tuple[float, float]
    rounds: int
    rel_spread: float

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {k: _round(v) for k, v in self.__dict__.items() if k != "ci95_ms"}
        data["ci95_ms"] = [_round(self.ci95_ms[0]), _round(self.ci95_ms[1])]
        return data


def significant(value: float) -> float:
    """`value` to 6 significant digits, as records store times."""
    return float(f"{value:.6g}")


def _round(value: float) -> float:
    return significant(value) if isinstance(value, float) else value


def median_ci(sorted_values: Sequence[float], z: float = 1.96) -> tuple[float, float]:
    """Distribution-free 95% confidence interval of the median (binomial order statistics)."""
    n = len(sorted_values)
    if n < 3:
        return (sorted_values[0], sorted_values[-1])
    half = z * math.sqrt(n) / 2
    lo = max(0, math.floor(n / 2 - half))
    hi = min(n - 1, math.ceil(n / 2 + half))
    return (sorted_values[lo], sorted_values[hi])


def summarize(seconds: Sequence[float]) -> Summary:
    values = sorted(seconds)
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive") if len(values) > 1 else (values[0],) * 3
    median = statistics.median(values)
    lo, hi = median_ci(values)
    ms = 1e3
    return Summary(
        median_ms=median * ms, iqr_ms=(q3 - q1) * ms, min_ms=values[0] * ms, max_ms=values[-1] * ms,
        mean_ms=statistics.fmean(values) * ms, ci95_ms=(lo * ms, hi * ms), rounds=len(values),
        rel_spread=((hi - lo) / 2 / median) if median > 0 else math.inf,
    )


def should_stop(seconds: Sequence[float], elapsed_s: float, policy: TimingPolicy) -> str | None:
    """The stopping rule: enough samples and a tight median, or a budget is spent."""
    n = len(seconds)
    if n >= policy.max_samples:
        return f"max_samples ({policy.max_samples})"
    if elapsed_s >= policy.max_time_s and n >= 3:
        return f"time cap ({policy.max_time_s:g} s)"
    if n < policy.min_samples or (sum(seconds) < policy.min_time_s and elapsed_s < policy.min_time_s):
        return None
    spread = summarize(seconds).rel_spread
    if spread <= policy.target_rel_spread:
        return f"noise target (median CI +/-{spread:.2%} <= {policy.target_rel_spread:.2%})"
    return None


def sample_until_stable(take_sample: Callable[[], float], clock: Callable[[], float],
                        policy: TimingPolicy) -> tuple[list[float], str]:
    """Call `take_sample` (returns one duration in seconds) until `should_stop` says so."""
    seconds: list[float] = []
    start = clock()
    while True:
        seconds.append(take_sample())
        reason = should_stop(seconds, clock() - start, policy)
        if reason:
            return seconds, reason


def significantly_faster(candidate: Summary, reference: Summary) -> bool:
    """True when the candidate's median CI lies wholly below the reference's (more than the noise)."""
    return candidate.ci95_ms[1] < reference.ci95_ms[0] and candidate.median_ms < reference.median_ms
