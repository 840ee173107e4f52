"""Timing a branch: samples from its worker (host clock or device events), fed to pytest-benchmark,
then an interleaved A/B against the baseline so drift between the two measurements cancels."""
from __future__ import annotations

import os
import time
from dataclasses import replace
from typing import Any

from ..check.verify import checked_call
from ..timing.policy import Samples, TimingPolicy, summarize
from ..toolchains.binding import BindSpec
from ..variant import Variant
from .clock import SampleClock


def bind_spec(variant: Variant) -> BindSpec:
    """The buffers of a timed call: the (toolchain's) default dims, seed 0."""
    assert variant.reference is not None
    dims = variant.case.dims
    return BindSpec(dict(dims), 0, variant.shapes(dims), variant.reference.inputs)


def measure(variant: Variant, policy: TimingPolicy, timeout_s: float, spec: BindSpec | None = None) -> dict[str, Any]:
    """The public timing API: time a resolved branch in its worker under `policy`.

    Returns the worker's reply: `samples` (timing.policy.Samples), `device` and `measure_wall_s`.
    """
    assert variant.worker is not None
    budget = timeout_s + policy.max_time_s + 10 * policy.warmup_s
    reply: dict[str, Any] = variant.worker.request("time", timeout_s=budget, spec=spec or bind_spec(variant),
                                                   policy=policy)
    return reply


def run_benchmark(variant: Variant, benchmark: Any, clock: SampleClock, policy: TimingPolicy, timeout_s: float,
                  nodeid: str) -> Samples:
    """Verify the default dims once (if the correctness test did not), time, and record the figures."""
    if not variant.default_verified:
        checked_call(variant, variant.case.dims, 0, nodeid)
        variant.default_verified = True
    assert variant.reference is not None
    dims = variant.case.dims
    started = time.perf_counter()
    result = measure(variant, policy, timeout_s)
    samples: Samples = result["samples"]
    clock.load(samples.seconds)
    benchmark.pedantic(clock.advance, rounds=len(samples.seconds), iterations=1, warmup_rounds=0)
    summary = summarize(samples.seconds)
    timing = {**summary.to_json(), "mode": samples.mode, "timer": samples.timer, "stop_reason": samples.stop_reason,
              "warmup_calls": samples.warmup_calls, "dims": dict(dims), "concurrent_workers": concurrent_workers(),
              **samples.extra}
    variant.record.timing = timing
    variant.record.throughput = {k: round(v, 3) for k, v in variant.reference.throughput(dims, summary.median_ms).items()}
    variant.record.device = result.get("device", {})
    benchmark.extra_info.update({"dcuopt_" + k: v for k, v in timing.items() if k != "dims"})
    benchmark.extra_info.update(variant.record.throughput)
    # What the harness itself cost around the measurement (IPC, bookkeeping, pytest-benchmark replay).
    measured = result.get("measure_wall_s", 0.0)
    timing["harness_overhead_s"] = round(time.perf_counter() - started - measured, 4)
    timing["measure_wall_s"] = round(measured, 4)
    return samples


def interleave_with_baseline(variant: Variant, baseline: Variant | None, rounds: int, policy: TimingPolicy,
                             timeout_s: float) -> dict[str, Any] | None:
    """A/B against the baseline in alternating short rounds; None when there is no baseline to run here."""
    if (rounds <= 0 or variant.branch.is_baseline or baseline is None or baseline.worker is None
            or not baseline.default_verified):
        return None  # under xdist the baseline may live in another process: the separate medians are all we have
    short = replace(policy, max_time_s=policy.max_time_s / rounds, min_samples=3, min_time_s=0.0,
                    warmup_s=policy.warmup_s / rounds)
    theirs: list[float] = []
    mine: list[float] = []
    base_spec, my_spec = bind_spec(baseline), bind_spec(variant)
    for _ in range(rounds):
        theirs += measure(baseline, short, timeout_s, base_spec)["samples"].seconds
        mine += measure(variant, short, timeout_s, my_spec)["samples"].seconds
    a, b = summarize(theirs), summarize(mine)
    interleaved = {"rounds": rounds, "baseline_median_ms": a.median_ms, "baseline_ci95_ms": list(a.ci95_ms),
                   "median_ms": b.median_ms, "ci95_ms": list(b.ci95_ms), "speedup": a.median_ms / b.median_ms,
                   "samples": [len(theirs), len(mine)]}
    rounded = {k: (round(v, 6) if isinstance(v, float) else v) for k, v in interleaved.items()}
    assert variant.record.timing is not None
    variant.record.timing["interleaved"] = rounded
    return rounded


def concurrent_workers() -> int:
    """How many xdist workers shared the machine while this was timed (1 = alone)."""
    return int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
