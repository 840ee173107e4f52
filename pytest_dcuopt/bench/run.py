"""Timing a branch: samples from its worker (host clock or device events), fed to pytest-benchmark,
then an interleaved A/B against the baseline so drift between the two measurements cancels.

Every measurement is checked as well: the worker returns the outputs of the calls just before the
first and just after the last timed call (with junk, not NaN, in the outputs beforehand, see
run/worker.py) and `check_timed_calls` compares them with the reference. A branch whose timed calls
are wrong is marked incorrect with the reason and never becomes champion.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import replace
from typing import Any

import pytest

from ..check.verify import checked_call, output_mismatches
from ..errors import TimedCallsWrong
from ..timing.policy import Samples, TimingPolicy, summarize
from ..toolchains.binding import BindSpec, Snapshot
from ..variant import Variant
from .clock import SampleClock


def bind_spec(variant: Variant) -> BindSpec:
    """The buffers of a timed call: the (toolchain's) default dims, seed 0."""
    return variant.bind_spec(variant.case.dims, 0)


def measure(variant: Variant, policy: TimingPolicy, timeout_s: float, spec: BindSpec | None = None) -> dict[str, Any]:
    """The public timing API: time a resolved branch in its worker under `policy`.

    Returns the worker's reply: `samples` (timing.policy.Samples), `device` and `measure_wall_s`. Raises
    TimedCallsWrong (and marks the branch incorrect) when the checked calls among the timed ones are wrong.
    """
    assert variant.worker is not None
    spec = spec or bind_spec(variant)
    budget = timeout_s + policy.max_time_s + 10 * policy.warmup_s
    reply: dict[str, Any] = variant.worker.request("time", timeout_s=budget, spec=spec, policy=policy)
    reply["timed_calls_checked"] = check_timed_calls(variant, spec, reply)
    return reply


def check_timed_calls(variant: Variant, spec: BindSpec, reply: dict[str, Any]) -> int | str:
    """Compare the outputs of the checked calls among the timed ones with the reference; mark and raise if wrong.

    Returns how many calls were checked, or why none were (a binding that cannot fill its outputs with junk:
    degraded, and the record says so through `timing.timed_calls_checked`).
    """
    assert variant.reference is not None
    checks: list[dict[str, Any]] = reply.get("checks", [])
    if reply.get("checks_skipped"):
        return str(reply["checks_skipped"])
    for check in checks:
        wrong = _describe_wrong(variant, spec, check["snapshot"])
        if wrong:
            message = (f"{variant.label}: wrong outputs on {check['call']}, although its correctness calls "
                       f"passed (dims={json.dumps(dict(spec.dims))} seed={spec.seed}). Before that call its outputs "
                       "held finite junk, as after an earlier call, not the NaN poison: a kernel that skips work when "
                       "its output already holds a value, or that changes behaviour after many calls, fails here. "
                       "Compute the full result on every call.\n" + "\n".join(wrong))
            variant.record.error = {"kind": "timed calls wrong", "message": message, "call": check["call"],
                                    "dims": dict(spec.dims)}
            variant.record.correct = False
            variant.failed_correctness = True
            raise TimedCallsWrong(message)
    return len(checks)


def _describe_wrong(variant: Variant, spec: BindSpec, snapshot: Snapshot) -> list[str]:
    """The kernel's problems and output mismatches of one snapshot ([] when it matches the reference), with the
    same tolerances as the correctness stage (declared at these dims, reduction bounds included)."""
    lines = [f"  kernel {problem}" for problem in snapshot.problems]
    lines += [m.describe() for m in output_mismatches(variant, snapshot, spec.dims, dict(spec.shapes))]
    return lines


def run_benchmark(variant: Variant, benchmark: Any, clock: SampleClock, policy: TimingPolicy, timeout_s: float,
                  nodeid: str) -> Samples:
    """Verify the default dims once (if the correctness test did not), time, and record the figures."""
    if not variant.default_verified:
        checked_call(variant, variant.case.dims, 0, nodeid)
        variant.default_verified = True
    assert variant.reference is not None
    dims = variant.case.dims
    started = time.perf_counter()
    result = _measure_or_fail(variant, policy, timeout_s)
    samples: Samples = result["samples"]
    clock.load(samples.seconds)
    benchmark.pedantic(clock.advance, rounds=len(samples.seconds), iterations=1, warmup_rounds=0)
    summary = summarize(samples.seconds)
    timing = {**summary.to_json(), "mode": samples.mode, "timer": samples.timer, "stop_reason": samples.stop_reason,
              "warmup_calls": samples.warmup_calls, "dims": dict(dims), "concurrent_workers": concurrent_workers(),
              "timed_calls_checked": result["timed_calls_checked"], **samples.extra}
    variant.record.timing = timing
    variant.record.throughput = {k: round(v, 3)
                                 for k, v in variant.reference.throughput(dims, summary.median_ms).items()}
    variant.record.device = result.get("device", {})
    benchmark.extra_info.update({"dcuopt_" + k: v for k, v in timing.items() if k != "dims"})
    benchmark.extra_info.update(variant.record.throughput)
    # What the harness itself cost around the measurement (IPC, bookkeeping, pytest-benchmark replay).
    measured = result.get("measure_wall_s", 0.0)
    timing["harness_overhead_s"] = round(time.perf_counter() - started - measured, 4)
    timing["measure_wall_s"] = round(measured, 4)
    return samples


def _measure_or_fail(variant: Variant, policy: TimingPolicy, timeout_s: float,
                     spec: BindSpec | None = None) -> dict[str, Any]:
    """`measure`, failing the running test with the reason (no traceback) when the timed calls were wrong."""
    try:
        return measure(variant, policy, timeout_s, spec)
    except TimedCallsWrong as exc:
        reason = str(exc)
    pytest.fail(reason, pytrace=False)


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
        try:
            theirs += measure(baseline, short, timeout_s, base_spec)["samples"].seconds
        except TimedCallsWrong:  # recorded on the baseline: no A/B against a wrong baseline
            return None
        # A wrong branch gets correct=False in its record: never ranked, whatever it measured before.
        mine += _measure_or_fail(variant, short, timeout_s, my_spec)["samples"].seconds
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
