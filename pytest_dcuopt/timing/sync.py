"""Timing a `solve` that synchronizes or allocates: how it is detected, and the method right for it.

Why a method of its own: the asynchronous method (`timing.bracket`) queues a delay kernel and counts on the
host queueing the start event, `solve` and the end event while the delay runs. A `solve` that calls
`cudaDeviceSynchronize()`, a blocking `cudaMemcpy` or `cudaFree` (which waits for the device) returns only
after the delay and its own kernels have run: every sample is late, the delay doubles to its cap, and the
stopping rule ends at the time cap with a handful of samples (seen on an H200: 5 samples, medians 75% apart).

**Detection** (`detect_sync`, after warm-up, `timing.sync_detected` in the record): one unhidden call on an
idle GPU gives the call's host time; then, `DETECT_PROBES` times, a delay kernel of
`max(DETECT_MIN_DELAY_S, DETECT_DELAY_FACTOR x that)` is queued and `launch()` is timed on the host, followed
by a synchronize, also timed. An asynchronous call returns in microseconds, long before the delay ends, and
the synchronize then waits for the rest of the delay. A call that waits for the device returns only after the
delay has run (host call >= `WAITED_FRACTION` of the delay), and the stream is idle right after it (the
synchronize returns at once). The verdict is `sync` when the call waited; both figures are recorded.

**Method** (`sample_sync`, `method: "sync"`), nvbench's `exec_tag::sync` semantics: no launch hiding and no
batch (hot) measurement; per sample, the L2 flush and a marker kernel, a synchronize (the GPU is idle when the
call starts), an event pair around one call timed on the host too, and a synchronize. Figures per call, each
named in the record (`timing.sync`):

* `kernels` (a): the summed device durations of the activities the call queued (its kernels, and its copies and
  memsets when it makes any), from the profiler's records (CUPTI / roctracer through torch.profiler), the flush
  and the marker left out; launch latency, host work and idle gaps are not in it. The primary figure (what
  pytest-benchmark gets) whenever the profiler works.
* `kernels_only`: the same without copies and memsets (what ncu's `gpu__time_duration` sums over kernels).
* `device_span` (b): from the start of the call's first device activity to the end of its last, same records:
  includes the device's idle gaps inside the call (a synchronize or an allocation between two launches).
* `event_span`: the event pair around the call on an idle GPU (nvbench's GPU time under `exec_tag::sync`):
  includes the launch latency and the host's work inside the call. The primary figure when the profiler does
  not work, and the record says so (`degraded`).
* `host_wall` (c): host time of `launch()` plus a device synchronize (nvbench's CPU time under `exec_tag::sync`);
  `host_call`: host time of `launch()` alone.

When the kernel library has sync hooks, `timing.sync_hooks` times the call instead (the marked method).
"""
from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .bracket import Hiding
from .device_timer import Activity, DeviceTimer, Event
from .offset import split_activities
from .policy import TimingPolicy, sample_quality, should_stop, significant
from .side_figures import describe_samples

DETECT_MIN_DELAY_S = 1e-3  # far beyond the host cost of an asynchronous call (5-15 us on the H200)
DETECT_MAX_DELAY_S = 0.1
DETECT_DELAY_FACTOR = 4.0  # the delay is at least this x one unhidden call's host time
DETECT_PROBES = 3
WAITED_FRACTION = 0.5  # a call that took at least this fraction of the delay waited for the device
IDLE_FRACTION = 0.25  # the stream was idle after the call when the synchronize took under this fraction of it
MARKER_CYCLES = 1000  # a delay kernel of ~0.5 us marks the start of each sample in the profiler's records
FIRST_CHUNK_S = 0.1  # host time of the first chunk of samples at least (one profiler session per chunk)
CHUNK_S = 0.25  # host time of each later chunk
MAX_CHUNK = 1000
COPY_PREFIXES = ("memcpy", "memset")  # profiler names of copies and memsets (CUPTI: "Memcpy DtoD (Device -> Device)")

FIGURES_WHAT = {
    "kernels_marked": "device time of the kernels (and device-side copies) the call queued before each of its waits, "
                      "from events its library's sync hooks record (no profiler running), each segment less the "
                      "event bracket's calibrated cost",
    "kernels": "(a) summed device durations of the activities the call queued (kernels, copies, memsets), from the "
               "profiler's records; flush and marker left out; no launch latency, host work or idle gaps",
    "kernels_only": "(a) without copies and memsets: the kernels alone, what ncu's gpu__time_duration sums",
    "device_span": "(b) first device activity's start to last one's end, from the profiler's records: includes the "
                   "device's idle gaps inside the call",
    "event_span": "an event pair around one call on an idle GPU (nvbench's GPU time under exec_tag::sync): includes "
                  "the launch latency and the host's work inside the call",
    "host_wall": "(c) host time of launch() plus a device synchronize (nvbench's CPU time under exec_tag::sync)",
    "host_call": "host time of launch() alone (it returns after the device work it waited for)",
}
NVBENCH = ("nvbench's exec_tag::sync semantics: no launch hiding (no delay kernel before the call), no batch (hot) "
           "measurement, one call per sample on an idle GPU with a device synchronize after it. nvbench reports "
           "`event_span` as GPU time and `host_wall` as CPU time; this harness reports `kernels` when the profiler "
           "works, because the other two count launch latency and host work, not the kernels")


@dataclass
class Detection:
    """Whether a call waits for the device (timing.sync_detected)."""

    verdict: str  # "sync" | "async" | "undetermined"
    host_call_s: float = 0.0  # median host time of launch() behind the delay
    delay_s: float = 0.0  # the delay queued before each probe call
    measured_delay_s: float = 0.0  # its duration on the device (events around it)
    wait_after_call_s: float = 0.0  # median host time of the synchronize right after the call
    unhidden_host_call_s: float = 0.0  # host time of one call on an idle GPU
    probes: int = 0
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        if self.verdict == "undetermined":
            return {"verdict": self.verdict, "reason": self.reason}
        us = 1e6
        reference = self.measured_delay_s or self.delay_s
        return {"verdict": self.verdict, "host_call_us": significant(self.host_call_s * us),
                "delay_us": significant(self.delay_s * us),
                "measured_delay_us": significant(self.measured_delay_s * us),
                "wait_after_call_us": significant(self.wait_after_call_s * us),
                "idle_after_call": self.wait_after_call_s <= IDLE_FRACTION * reference,
                "unhidden_host_call_us": significant(self.unhidden_host_call_s * us), "probes": self.probes,
                "rule": (f"sync when the host call took >= {WAITED_FRACTION:g} x the delay queued before it (it "
                         "waited for the device); idle_after_call: a synchronize right after the call took <= "
                         f"{IDLE_FRACTION:g} x the delay (the stream had nothing left to run)")}


def detect_sync(launch: Callable[[], Any], device_timer: DeviceTimer, hiding: Hiding, clock: Callable[[], float],
                probes: int = DETECT_PROBES) -> Detection:
    """Does `launch()` wait for the device? Time it behind a long delay kernel (see the module docstring)."""
    if not hiding.supported:
        return Detection("undetermined", reason="the runtime has no delay kernel, so a call that waits for the device "
                                                "cannot be told from one that does not; timed as asynchronous")
    device_timer.synchronize()
    begin = clock()
    launch()
    unhidden = clock() - begin
    device_timer.synchronize()
    delay = min(DETECT_MAX_DELAY_S, max(DETECT_MIN_DELAY_S, DETECT_DELAY_FACTOR * unhidden))
    calls: list[float] = []
    waits: list[float] = []
    marks: list[tuple[Event, Event]] = []
    for _ in range(probes):
        before, after = device_timer.event(), device_timer.event()
        before.record()
        device_timer.sleep(hiding.cycles(delay))
        after.record()
        begin = clock()
        launch()
        returned = clock()
        device_timer.synchronize()
        calls.append(returned - begin)
        waits.append(clock() - returned)
        marks.append((before, after))
    measured = statistics.median(b.elapsed_time(a) * 1e-3 for b, a in marks)
    host_call = statistics.median(calls)
    verdict = "sync" if host_call >= WAITED_FRACTION * (measured if measured > 0 else delay) else "async"
    return Detection(verdict, host_call, delay, measured, statistics.median(waits), unhidden, probes)


@dataclass
class _Timed:
    """One sample's host figures and its event pair (read after the chunk's synchronize)."""

    host_call_s: float
    host_wall_s: float
    start: Event
    end: Event
    sample_s: float  # host time of the whole sample: flush, marker, synchronizes and the call


@dataclass
class SyncSampled:
    """What `sample_sync` measured: every figure per call (seconds), and which one is primary."""

    figures: dict[str, list[float]]
    primary: str  # "kernels" or "event_span"
    reason: str  # the stopping rule's
    degraded: str = ""  # why the profiler's figures are missing ("" when they are there)
    sessions: int = 0  # profiler sessions (one per chunk)
    activity_names: list[str] = field(default_factory=list)
    activities_per_call: list[int] = field(default_factory=list)

    @property
    def seconds(self) -> list[float]:
        return self.figures[self.primary]


def sample_sync(launch: Callable[[], Any], device_timer: DeviceTimer, policy: TimingPolicy, hiding: Hiding,
                clock: Callable[[], float], flush: bool) -> SyncSampled:
    """One call per sample on an idle GPU, in chunks of one profiler session each, until `should_stop`."""
    infra, degraded = _infra(device_timer, hiding, flush)
    pilot: list[_Timed] = []
    _queue_sample(launch, device_timer, hiding, flush, clock, pilot)  # sizes the first chunk; not a sample
    figures: dict[str, list[float]] = {name: [] for name in FIGURES_WHAT}
    names: set[str] = set()
    counts: set[int] = set()
    sessions = 0
    # One profiler session per chunk costs far more than sampling: the first chunk covers min_time_s at once.
    chunk = _chunk(max(FIRST_CHUNK_S, 1.5 * policy.min_time_s), pilot[0].sample_s, policy, 0, policy.max_time_s)
    sampled_s = 0.0  # host time spent in samples; the profiler's own start/stop/processing is not sampling
    start = clock()
    while True:
        timed: list[_Timed] = []

        def body(count: int = chunk, into: list[_Timed] = timed) -> None:
            for _ in range(count):
                _queue_sample(launch, device_timer, hiding, flush, clock, into)

        if infra is not None:
            activities = device_timer.profile_activities(body)
            sessions += 1
            groups = (split_at_markers(activities, infra, chunk) if activities is not None else
                      f"the profiler failed in session {sessions}: "
                      f"{device_timer.profiler_problem or 'no reason given'}")
            if isinstance(groups, str):
                infra, degraded = None, groups
            else:
                _add_profiled(figures, groups)
                names.update(a.name for group in groups for a in group)
                counts.update(len(group) for group in groups)
        else:
            body()
            device_timer.synchronize()
        _add_timed(figures, timed)
        sampled_s += sum(sample.sample_s for sample in timed)
        primary = "kernels" if infra is not None else "event_span"
        reason = should_stop(figures[primary], sampled_s, policy)
        wall_s = clock() - start
        if reason is None and wall_s >= 2 * policy.max_time_s + 1.0:
            reason = (f"time cap ({policy.max_time_s:g} s of sampling; {wall_s:.1f} s with "
                      f"{sessions} profiler sessions)")
        if reason:
            kept = {name: values for name, values in figures.items() if values and (
                infra is not None or name not in ("kernels", "kernels_only", "device_span"))}
            return SyncSampled(kept, primary, reason, degraded, sessions, sorted(names)[:8], sorted(counts))
        taken = len(figures["host_wall"])  # 0 when a failing profiler session ran none of its samples
        per_sample = sampled_s / taken if taken else pilot[0].sample_s
        chunk = _chunk(CHUNK_S, per_sample, policy, len(figures[primary]), policy.max_time_s - sampled_s)


def _chunk(target_s: float, per_sample_s: float, policy: TimingPolicy, taken: int, time_left_s: float) -> int:
    """Samples in the next chunk: about `target_s` of host time, at most half the time left (so the noise target,
    not the time cap, can end sampling), not past max_samples; at least 3, so the time cap can end it."""
    wanted = math.ceil(target_s / max(per_sample_s, 1e-6))
    by_time = math.ceil(max(time_left_s, 0.0) / 2 / max(per_sample_s, 1e-6))
    return int(max(3, min(wanted, by_time, MAX_CHUNK, max(1, policy.max_samples - taken))))


def _queue_sample(launch: Callable[[], Any], device_timer: DeviceTimer, hiding: Hiding, flush: bool,
                  clock: Callable[[], float], into: list[_Timed]) -> None:
    """Flush, marker, synchronize (the GPU is idle), then one call between an event pair, then a synchronize."""
    queued = clock()
    if flush:
        device_timer.flush()
    if hiding.supported:
        device_timer.sleep(MARKER_CYCLES)
    device_timer.synchronize()
    start, end = device_timer.event(), device_timer.event()
    start.record()
    begin = clock()
    launch()
    returned = clock()
    end.record()
    device_timer.synchronize()
    done = clock()
    into.append(_Timed(returned - begin, done - begin, start, end, done - queued))


def _infra(device_timer: DeviceTimer, hiding: Hiding, flush: bool) -> tuple[list[str] | None, str]:
    """Names of the activities each sample queues before the call (flush, marker), learnt by profiling them alone
    once per device timer; None with the reason when the profiler records nothing here."""
    key = f"sync-infra:{'flush' if flush else 'no-flush'}"
    cache = device_timer.activity_cache
    if cache is not None and key in cache:
        return cache[key], ""

    def infra_only() -> None:
        if flush:
            device_timer.flush()
        if hiding.supported:
            device_timer.sleep(MARKER_CYCLES)

    found = device_timer.profile_activities(infra_only)
    if found is None:
        why = device_timer.profiler_problem or "this runtime has no profiler hook"
        return None, (f"no profiler activity records ({why}): the primary figure is event_span (launch latency and "
                      "host work inside the call included), not the kernels' own time")
    names = [activity.name for activity in found]
    if cache is not None:
        cache[key] = names
    return names, ""


def split_at_markers(activities: Sequence[Activity], infra: Sequence[str],
                     samples: int) -> list[list[Activity]] | str:
    """The call's own activities per sample: each sample starts with the `infra` sequence (flush, marker). Unlike
    `offset.split_activities` this allows a different number of activities per call."""
    if not infra:
        return split_activities(list(activities), infra, samples)
    width, wanted = len(infra), list(infra)
    groups: list[list[Activity]] = []
    index = 0
    while index < len(activities):
        if [a.name for a in activities[index:index + width]] == wanted:
            groups.append([])
            index += width
            continue
        if not groups:
            return f"device activity {activities[index].name!r} came before the first sample's flush/marker"
        groups[-1].append(activities[index])
        index += 1
    if len(groups) != samples:
        return (f"{len(groups)} flush/marker sequences ({', '.join(infra)}) in the profiler's records for {samples} "
                "samples")
    empty = [i for i, group in enumerate(groups) if not group]
    if empty:
        return f"{len(empty)} of {samples} calls queued no device activity the profiler saw (first: sample {empty[0]})"
    return groups


def _add_profiled(figures: dict[str, list[float]], groups: list[list[Activity]]) -> None:
    for group in groups:
        figures["kernels"].append(sum(a.seconds for a in group))
        figures["kernels_only"].append(sum(a.seconds for a in group if not a.name.lower().startswith(COPY_PREFIXES)))
        figures["device_span"].append(max(a.end_s for a in group) - min(a.start_s for a in group))


def _add_timed(figures: dict[str, list[float]], timed: list[_Timed]) -> None:
    for sample in timed:
        figures["event_span"].append(sample.start.elapsed_time(sample.end) * 1e-3)
        figures["host_wall"].append(sample.host_wall_s)
        figures["host_call"].append(sample.host_call_s)


def sync_record(sampled: SyncSampled, policy: TimingPolicy, timer: str) -> dict[str, Any]:
    """`timing.sync`: every figure (median/IQR/min/max/n; raw samples for the primary one) with what it is, and
    which one is primary."""
    record: dict[str, Any] = {
        "primary": sampled.primary, "timer": timer, "degraded": sampled.degraded or None,
        "profiler_sessions": sampled.sessions, "activity_names": sampled.activity_names,
        "activities_per_call": sampled.activities_per_call, "nvbench": NVBENCH,
    }
    for name, values in sampled.figures.items():
        record[name] = describe_samples(values, what=FIGURES_WHAT[name])
        if name != sampled.primary:  # the primary's raw samples are timing.samples_ms; keep the record small
            record[name].pop("samples_ms")
    record.update(sample_quality(len(sampled.seconds), policy, sampled.reason))
    return record
