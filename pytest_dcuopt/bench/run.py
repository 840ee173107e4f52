"""Timing a branch: samples from its worker (host clock or device events), fed to pytest-benchmark,
then an interleaved A/B against the baseline so drift between the two measurements cancels.

Every measurement is checked as well: the worker returns the outputs of the calls just before the
first and just after the last timed call (with junk, not NaN, in the outputs beforehand, see
run/kernel_calls.py) and the caller's `TimingCheck` (check/'s `checked_calls.TIMING_REPLY_CHECK`) compares them
with the reference before the samples are used. A branch whose timed calls are wrong is marked incorrect with the
reason and never becomes champion. bench/ times and never decides: it imports nothing of check/, and each of its
timing functions takes the check as a required argument, so no caller can time without one.

Exclusive timing (run/devices.py): every timed request runs under its worker's device lock (the physical GPU, or
the host for CPU kernels unless --dcuopt-no-host-lock), shared by xdist workers and other pytest sessions on the
host; the record's `device_lock` says which lock, how long it waited and held it, and when. The interleaved A/B
holds the lock once around all its rounds: a second flock by the same process would wait on itself for ever.

The A/B is a light operation: only its last round makes the checked calls (the branch's own timing run has
made them already; each moves every buffer through the worker's pipe and is compared on the host, seconds per
round at 32M elements), and its rounds take the primary samples only, never the side figures (hot,
hot-rotated, the original method, the launch overhead; `timing.side_figures`). Under pytest-benchmark's
--benchmark-disable nothing is timed: the benchmark test makes one checked call (`run_disabled`).

A benchmark test times its branch at one `BenchPoint`: the default dims, or one of the case's benchmark sizes
(ref.py `bench_sizes`), whose figures go to `record.sizes[<size>]`. The checked timed calls are compared at the
point's dims, so the reference is computed at a benchmark size only where they check it, once per size for every
branch (the reference cache keys on the dims and the inputs, which seed 0 makes the same for every branch).
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import pytest

from ..call_inputs import handed, spec_inputs
from ..case.sizes import BenchSize
from ..errors import CaseError, TamperedFiles, TimedCallsWrong, TimingRefused
from ..run.devices import LOCK_WAIT_S, LockHold, TimingLock, device_lock
from ..run.protocol import CheckPlan
from ..timing.policy import Samples, TimingPolicy, significant, summarize
from ..toolchains.binding import BindSpec
from ..toolchains.exchange import checked_call_numbers, draw_seed, plan_seed
from ..variant import Variant
from .clock import SampleClock


class RepliesChecked(Protocol):
    """What checking a timing reply's checked calls found and cost."""

    @property
    def checked(self) -> int: ...  # the checked calls compared

    @property
    def seconds(self) -> float: ...  # checking them, computing the references included

    @property
    def reference_s(self) -> float: ...  # of which computing references for inputs not seen before


class TimingCheck(Protocol):
    """The pytest process's decision on a timing request, handed to bench/ by its caller (check/'s
    `checked_calls.TIMING_REPLY_CHECK`): bench/ times, check/ decides."""

    def check_reply(self, variant: Variant, spec: BindSpec, plan: CheckPlan,
                    reply: dict[str, Any]) -> RepliesChecked:
        """Check a reply before its samples are used; raise TimedCallsWrong (the branch marked incorrect) if wrong."""
        ...

    def not_believed(self, variant: Variant, error: TimingRefused | TamperedFiles) -> None:
        """Mark a branch whose own timing was refused or whose files changed while it answered."""
        ...


@dataclass(frozen=True)
class BenchPoint:
    """Where one benchmark test times its branch: the (toolchain's) default dims, or one benchmark size."""

    dims: dict[str, Any] = field(default_factory=dict)
    size: str | None = None  # the benchmark size's name; None: the default dims


def default_point(variant: Variant) -> BenchPoint:
    return BenchPoint(dict(variant.case.dims))


def size_point(variant: Variant, size: BenchSize) -> BenchPoint:
    """The point of a declared benchmark size, after checking that its dims make a call to time: the declared
    relations hold and no buffer is empty (a shape that cannot exist there raises from `Variant.shapes`)."""
    assert variant.reference is not None
    dims = variant.case.dims_at(size)
    where = f"{variant.reference.path}: bench_sizes {size.name!r} ({size.describe()})"
    broken = [str(relation) for relation in variant.reference.relations if not relation.evaluate(dims)]
    if broken:
        raise CaseError(f"{where} gives dims {dims}, which break the declared relations {broken}. Change the size's "
                        "dims so that they hold.")
    empty = sorted(name for name, shape in variant.shapes(dims).items() if 0 in shape)
    if empty:
        raise CaseError(f"{where} gives dims {dims}, where the buffers {empty} are empty: nothing would be timed. Give "
                        "sizes of at least 1.")
    return BenchPoint(dims, size.name)


def bind_spec(variant: Variant, point: BenchPoint | None = None) -> BindSpec:
    """The buffers of a timed call: the point's dims (the toolchain's default dims without one), seed 0 (mixed with
    the run's seed, `exchange.draw_seed`)."""
    return variant.bind_spec(point.dims if point is not None else variant.case.dims, draw_seed(0))


_EVERY_CALL: list[bool] = [False]


def check_every_call(enabled: bool) -> None:
    """--dcuopt-check-every-call: every timed call of every request comes back and is compared (the session sets it)."""
    _EVERY_CALL[0] = bool(enabled)


def plan_for(policy: TimingPolicy, spec: BindSpec, purpose: str, index: int = 0,
             announced: bool = True) -> CheckPlan:
    """The checked calls of one timing request: the same for every branch at these dims in this run (the references
    of their inputs are computed once), another for every request. `announced=False`: the timed calls chosen at
    random only (an A/B round before the last: at real sizes each announced call moves its outputs through the
    pipe)."""
    seed = plan_seed(purpose, spec.dims, index)
    numbers = checked_call_numbers(seed, policy.min_samples)
    # A round before the last checks one timed call (each needs its own reference: 256 MB of float64 per 32M-element
    # output, which the reference cache cannot keep for many rounds and sizes at once).
    return CheckPlan(seed, plan_seed("new inputs", spec.dims), numbers if announced else numbers[:1],
                     _EVERY_CALL[0], announced, poisoned_start(purpose, spec.dims, seed, announced))


def poisoned_start(purpose: str, dims: Any, seed: int, announced: bool) -> bool:
    """Whether a timing request starts from the NaN poison (`CheckPlan.poisoned_start`): the branch's own timing at
    these dims one way, chosen from the run's secret seed, the last (announced) A/B round the other way, the rounds
    in between at random. Both requests that make the announced checks therefore start differently."""
    own = bool(plan_seed("timing", dims) & 1)
    if purpose == "timing":
        return own
    if announced:
        return not own
    return bool(seed >> 1 & 1)


def timing_at(variant: Variant, point: BenchPoint) -> dict[str, Any] | None:
    """The branch's recorded timing at the point (None: not timed there in this process)."""
    if point.size is None:
        return variant.record.timing
    timing: dict[str, Any] | None = variant.record.sizes.get(point.size, {}).get("timing")
    return timing


def measure(variant: Variant, check: TimingCheck, policy: TimingPolicy, timeout_s: float,
            spec: BindSpec | None = None, *, lock: bool = True, plan: CheckPlan | None = None,
            bound: bool = True) -> dict[str, Any]:
    """The public timing API: time a resolved branch in its worker under `policy`, its reply checked by `check`
    (`check.checked_calls.TIMING_REPLY_CHECK`) before it is returned.

    Returns the worker's reply: `samples` (timing.policy.Samples), `device`, `measure_wall_s` and, with `lock`,
    `device_lock` (the worker's device lock, held around the request). `lock=False` is for a caller that holds
    that lock already (`held_locks`) and records it itself. Raises TimedCallsWrong (and `check` marks the branch
    incorrect) when the checked calls among the timed ones are wrong (`plan`: which ones; default: the branch's own
    timing's plan at these dims). `bound`: whether the pytest process bounds the reply with its batch of calls
    (run/bounding_calls.py; decided here, never told to the worker).
    """
    worker = variant.worker
    assert worker is not None
    spec = spec or bind_spec(variant)
    plan = plan or plan_for(policy, spec, "timing")
    budget = timeout_s + policy.max_time_s + 10 * policy.warmup_s
    sent = handed(variant, spec, spec_inputs(variant, spec))  # the inputs this process drew, its checks' too

    def time_request() -> tuple[dict[str, Any], float]:
        asked = time.perf_counter()
        answer: dict[str, Any] = worker.request("time", timeout_s=budget, spec=sent, policy=policy, plan=plan,
                                                bound=bound)
        return answer, time.perf_counter() - asked

    if lock:
        with held_locks(variant) as hold:
            reply, round_trip_s = time_request()
        reply["device_lock"] = hold.to_json()  # after the release: with how long it was held
    else:
        reply, round_trip_s = time_request()
    checked = check.check_reply(variant, spec, plan, reply)
    reply["timed_calls_checked"] = checked.checked
    reply["phases_s"] = request_phases(reply, round_trip_s, checked.seconds, checked.reference_s)
    return reply


def request_phases(reply: dict[str, Any], round_trip_s: float, compare_s: float,
                   reference_s: float = 0.0) -> dict[str, float]:
    """Where a timing request's time went besides the samples: the worker's own phases (binding the buffers, the
    checked calls with their snapshots), `transfer` (the pipe both ways and putting back what the snapshots left
    out), `reference` (computing the reference for inputs it had not seen: decoding them, the call, wherever it ran)
    and `compare` (the rest of checking the calls' outputs, on this side)."""
    phases = {name: float(seconds) for name, seconds in reply.get("worker_phases_s", {}).items()}
    phases["transfer"] = max(0.0, round_trip_s - float(reply.get("worker_wall_s", round_trip_s)))
    phases["reference"] = reference_s
    phases["compare"] = max(0.0, compare_s - reference_s)
    return phases


@contextmanager
def held_locks(*variants: Variant) -> Iterator[LockHold]:
    """Hold the device locks of the variants' workers for the block; yields the first variant's hold.

    Each lock is taken once however many variants share it (the same process asking twice would wait for
    ever), in name order, so two processes that need the same two locks cannot deadlock.
    """
    locks: dict[str, TimingLock] = {}
    for variant in variants:
        assert variant.worker is not None
        locks.setdefault(variant.worker.lock.name, variant.worker.lock)
    label = " and ".join(v.label for v in variants)
    with ExitStack() as stack:
        holds = {name: stack.enter_context(device_lock(name, enabled=lock.enabled, label=label, timeout_s=LOCK_WAIT_S,
                                                       disabled_reason=lock.disabled_reason))
                 for name, lock in sorted(locks.items())}
        assert variants[0].worker is not None
        yield holds[variants[0].worker.lock.name]


def run_benchmark(variant: Variant, check: TimingCheck, benchmark: Any, clock: SampleClock, policy: TimingPolicy,
                  timeout_s: float, point: BenchPoint | None = None) -> Samples:
    """Time a verified branch at the point (default: the default dims; `check.before_timing.ready_to_time` ran
    first), and record the figures: in the branch's record, or in its entry for the point's benchmark size."""
    assert variant.reference is not None
    point = point or default_point(variant)
    dims = point.dims
    started = time.perf_counter()
    result = _measure_or_fail(variant, check, policy, timeout_s, bind_spec(variant, point))
    samples: Samples = result["samples"]
    clock.load(samples.seconds)
    benchmark.pedantic(clock.advance, rounds=len(samples.seconds), iterations=1, warmup_rounds=0)
    summary = summarize(samples.seconds)
    timing = {**summary.to_json(), "mode": samples.mode, "timer": samples.timer, "stop_reason": samples.stop_reason,
              "warmup_calls": samples.warmup_calls, "dims": dict(dims), "concurrent_workers": concurrent_workers(),
              "device_lock": result["device_lock"], "timed_calls_checked": result["timed_calls_checked"],
              **samples.extra}
    # Every timing keeps its raw samples (device timing already puts them in `extra`): the gate compares them.
    timing.setdefault("samples_ms", [significant(s * 1e3) for s in samples.seconds])
    throughput = {k: round(v, 3) for k, v in variant.reference.throughput(dims, summary.median_ms).items()}
    assert variant.worker is not None
    device = {**result.get("device", {}), **variant.worker.placement()}
    if point.size is None:
        variant.record.timing, variant.record.throughput, variant.record.device = timing, throughput, device
    else:
        variant.record.size_entry(point.size, dims).update(timing=timing, throughput=throughput, device=device)
    benchmark.extra_info.update({"dcuopt_" + k: v for k, v in timing.items() if k not in ("dims", "device_lock")})
    benchmark.extra_info["dcuopt_device_lock_held"] = result["device_lock"]["held"]
    benchmark.extra_info.update(throughput)
    if point.size is not None:
        benchmark.extra_info.update(dcuopt_size=point.size, dcuopt_dims=dict(dims))
    # What the harness itself cost around the measurement (IPC, bookkeeping, pytest-benchmark replay).
    measured = result.get("measure_wall_s", 0.0)
    overhead = time.perf_counter() - started - measured
    timing["harness_overhead_s"] = round(overhead, 4)
    timing["measure_wall_s"] = round(measured, 4)
    phases = dict(result.get("phases_s", {}))
    phases["record"] = max(0.0, overhead - sum(phases.values()))  # the samples replayed, figures, this record
    timing["harness_phases_s"] = {name: round(seconds, 4) for name, seconds in phases.items()}
    return samples


def _measure_or_fail(variant: Variant, check: TimingCheck, policy: TimingPolicy, timeout_s: float,
                     spec: BindSpec | None = None, *, lock: bool = True,
                     plan: CheckPlan | None = None, bound: bool = True) -> dict[str, Any]:
    """`measure` of the branch's own timing, failing the running test with the reason (no traceback) when the timed
    calls were wrong; a timing refused or tampered with is not believed (`check.not_believed`)."""
    try:
        return measure(variant, check, policy, timeout_s, spec, lock=lock, plan=plan, bound=bound)
    except TimedCallsWrong as exc:
        reason = str(exc)
        if isinstance(exc, TimingRefused):  # refuted by what the pytest process measured (timing/bounds.py)
            check.not_believed(variant, exc)
    except TamperedFiles as exc:  # its verdicts are withheld: never ranked
        reason = str(exc)
        check.not_believed(variant, exc)
    pytest.fail(reason, pytrace=False)


def interleave_with_baseline(variant: Variant, baseline: Variant | None, check: TimingCheck, rounds: int,
                             policy: TimingPolicy, timeout_s: float,
                             point: BenchPoint | None = None) -> dict[str, Any] | None:
    """A/B against the baseline in alternating short rounds at the point (default: the default dims); None when
    there is no baseline to run here (at a benchmark size: none timed at that size in this process)."""
    point = point or default_point(variant)
    if (rounds <= 0 or variant.branch.is_baseline or baseline is None or baseline.worker is None
            or not baseline.verdicts.default_verified
            or (point.size is not None and timing_at(baseline, point) is None)):
        return None  # under xdist the baseline may live in another process: the separate medians are all we have
    short = ab_round_policy(policy, rounds)
    theirs: list[float] = []
    mine: list[float] = []
    base_spec, my_spec = bind_spec(baseline, point), bind_spec(variant, point)
    # One hold for every round: the pair is timed back to back with no other measurement in between, and
    # `measure` inside must not take the lock again (lock=False).
    with held_locks(variant, baseline) as hold:
        for index in range(rounds):
            # Every round is prepared like any timing and its timed calls chosen at random are checked; the last round
            # makes the announced calls too. The two sides of a round share its plan.
            plan = plan_for(short, my_spec, "A/B round", index, announced=index == rounds - 1)
            bound = bounded_round(my_spec, index, rounds)
            try:
                theirs += measure(baseline, check, short, timeout_s, base_spec, lock=False, plan=plan,
                                  bound=bound)["samples"].seconds
            except TimedCallsWrong:  # recorded on the baseline: no A/B against a wrong baseline
                return None
            # A wrong branch gets correct=False in its record: never ranked, whatever it measured before.
            mine += _measure_or_fail(variant, check, short, timeout_s, my_spec, lock=False, plan=plan,
                                     bound=bound)["samples"].seconds
    a, b = summarize(theirs), summarize(mine)
    interleaved = {"rounds": rounds, "baseline_median_ms": a.median_ms, "baseline_ci95_ms": list(a.ci95_ms),
                   "median_ms": b.median_ms, "ci95_ms": list(b.ci95_ms), "speedup": a.median_ms / b.median_ms,
                   "samples": [len(theirs), len(mine)]}
    rounded = {k: (round(v, 6) if isinstance(v, float) else v) for k, v in interleaved.items()}
    rounded["device_lock"] = hold.to_json()
    timing = timing_at(variant, point)
    assert timing is not None
    timing["interleaved"] = rounded
    return rounded


def ab_round_policy(policy: TimingPolicy, rounds: int) -> TimingPolicy:
    """The policy of one side's A/B round: both sides' rounds together sample within one timing's budget
    (max-time / (2 x rounds) a side and round). Every timed call has its inputs rotated first, so at DRAM sizes a
    sample costs several calls and rounds run to their cap: twice that budget doubled the suite's sampling for a
    pooled interval narrower by only 1/sqrt(2)."""
    return replace(policy, max_time_s=policy.max_time_s / (2 * rounds), min_samples=3, min_time_s=0.0,
                   warmup_s=policy.warmup_s / rounds, side_figures=False)


def bounded_round(spec: BindSpec, index: int, rounds: int) -> bool:
    """Whether A/B round `index` is bounded by the pytest process's batch of calls (run/bounding_calls.py): the last
    round, and one of the others chosen from the run's secret seed. Neither is told to the worker, which cannot tell
    a bounded round from another while it is timed; a batch after every round cost more than the rounds' sampling."""
    if index == rounds - 1:
        return True
    return index == plan_seed("bounded A/B round", spec.dims) % max(1, rounds - 1)


BENCHMARKS_DISABLED = "benchmarks disabled (--benchmark-disable): one checked call at the default dims, no timing"
SIZE_DISABLED = "benchmarks disabled (--benchmark-disable): one checked call at this size's dims, no timing"


def benchmarks_disabled(config: pytest.Config) -> bool:
    """pytest-benchmark's --benchmark-disable as the user gave it (--benchmark-enable overrides it). Not the
    automatic disabling under xdist: there the harness still times (and says how many workers shared the machine)."""
    return bool(config.getoption("benchmark_disable", False)) and not config.getoption("benchmark_enable", False)


def run_disabled(variant: Variant, check_once: Callable[[Variant, str, Mapping[str, Any]], str | None], nodeid: str,
                 point: BenchPoint | None = None) -> str | None:
    """What pytest-benchmark does under --benchmark-disable: call the target once, keep no statistics. Here the
    call is `check_once` (check/'s `before_timing.check_default_once`): checked against the reference at the
    point's dims (default: the default dims); `timing` stays null and the record (or the size's entry) says why in
    `skipped`. The failure message (the branch is then marked incorrect), or None."""
    point = point or default_point(variant)
    wrong = check_once(variant, nodeid, point.dims)
    if wrong is None and timing_at(variant, point) is None:
        if point.size is None:
            variant.record.skipped = BENCHMARKS_DISABLED
        else:
            variant.record.size_entry(point.size, point.dims)["skipped"] = SIZE_DISABLED
    return wrong


def concurrent_workers() -> int:
    """How many xdist workers shared the machine while this was timed (1 = alone)."""
    return int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
