"""One bracketed sample: a delay kernel hides the host's launch cost, an event pair times the body.

Each sample queues, on the kernel's stream: a pre event, the delay kernel (`torch.cuda._sleep`), the
start event, the body (one call, or a batch), the end event. The whole sample is queued while the
delay runs, so ctypes/launch latency stays outside the timed window. A sample whose host-side queueing
took longer than the delay ran on the GPU (pre event to start event) may have let the GPU idle inside
the window: it is late, and dropped by the caller; when over a quarter of a chunk is late the delay
is doubled.
"""
from __future__ import annotations

import os
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .device_timer import DeviceTimer, Event
from .policy import significant

MIN_DELAY_S = 20e-6
MAX_DELAY_S = 5e-3
LATE_MARGIN = 0.9  # a sample is clean when its host queueing took under this fraction of the delay
OVERHEAD_CALLS = 20

#: (pre, start, end) events of each queued sample.
Marks = list[tuple[Event, Event, Event]]


@dataclass
class Hiding:
    """The delay kernel that hides host launch latency."""

    supported: bool
    cycles_per_s: float = 0.0
    delay_s: float = 0.0
    expected_gap_s: float = 0.0  # measured duration of the delay on the GPU
    adjustments: int = 0
    rate_from: str = "measured"  # where cycles_per_s came from: measured here, or reused (see `cached_hiding`)

    def cycles(self, delay_s: float | None = None) -> int:
        return int((self.delay_s if delay_s is None else delay_s) * self.cycles_per_s)

    def to_json(self) -> dict[str, Any]:
        if not self.supported:
            return {"method": "none: the runtime has no delay kernel, so host launch latency is NOT hidden"}
        return {"method": "delay kernel before the start event (torch.cuda._sleep)",
                "delay_us": significant(self.delay_s * 1e6),
                "measured_delay_us": significant(self.expected_gap_s * 1e6),
                "cycles_per_us": significant(self.cycles_per_s * 1e-6), "cycles_per_us_from": self.rate_from,
                "doubled": self.adjustments}


def delay_for(host_seconds: Sequence[float], calls: int = 1, floor_s: float = MIN_DELAY_S) -> float:
    """A delay long enough for the host to queue `calls` launches plus the events behind it."""
    if not host_seconds:
        return floor_s
    ordered = sorted(host_seconds)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return float(min(MAX_DELAY_S, max(floor_s, 2.0 * calls * p90 + 10e-6)))


def late_mask(host_spans: Sequence[float], delay_on_gpu_s: float) -> list[bool]:
    """True where the host took so long to queue start event, launch(es) and end event that the delay
    kernel (which ran `delay_on_gpu_s` on the GPU) may have finished first, letting the GPU idle in the window."""
    limit = delay_on_gpu_s * LATE_MARGIN
    return [span > limit for span in host_spans]


def host_launch_seconds(launch: Callable[[], Any], device_timer: DeviceTimer, clock: Callable[[], float],
                        calls: int = OVERHEAD_CALLS) -> list[float]:
    """Host time of one `launch()` (ctypes + driver enqueue + error check), with the GPU held busy."""
    device_timer.synchronize()
    device_timer.sleep(int(2e-3 * 1e9))  # ~1 ms+ at any clock: the queue never blocks the host here
    seconds = []
    for _ in range(calls):
        begin = clock()
        launch()
        seconds.append(clock() - begin)
    device_timer.synchronize()
    return seconds


def calibrate_hiding(device_timer: DeviceTimer, host: Sequence[float]) -> Hiding:
    """Measure the delay kernel's cycles per second; pick a delay that covers queueing one sample
    (`host`: seconds per launch, from `host_launch_seconds`)."""
    device_timer.synchronize()
    probe_cycles = 200_000
    marks = []
    for _ in range(5):
        start, end = device_timer.event(), device_timer.event()
        start.record()
        if not device_timer.sleep(probe_cycles):
            return Hiding(False)
        end.record()
        marks.append((start, end))
    device_timer.synchronize()
    durations = sorted(s.elapsed_time(e) * 1e-3 for s, e in marks)
    rate = probe_cycles / statistics.median(durations) if durations[0] > 0 else 1e9
    return Hiding(True, cycles_per_s=rate, delay_s=delay_for(host))


def cached_hiding(device_timer: DeviceTimer) -> Hiding:
    """`calibrate_hiding` once per device timer (= per device and process), or the rate handed over from the first
    worker on this device (`timing.calibration`): the delay kernel's rate does not depend on the kernel timed."""
    cache = device_timer.hiding_cache
    rate = cache.get("cycles_per_s") if cache is not None else None
    if cache is not None and rate and device_timer.sleep(0):  # sleep(0) only says whether there is a delay kernel
        how = "handed over from the first worker on this device" if cache.get("handed_over") else "reused"
        return Hiding(True, cycles_per_s=float(rate), delay_s=delay_for([]),
                      rate_from=f"{how} (measured by {cache.get('measured_by', 'an earlier measurement')})")
    hiding = calibrate_hiding(device_timer, [])
    if cache is not None and hiding.supported:
        cache.update(cycles_per_s=hiding.cycles_per_s, measured_by=f"pid {os.getpid()}", handed_over=False)
    return hiding


def queue_bracket(device_timer: DeviceTimer, body: Callable[[], Any], hiding: Hiding, clock: Callable[[], float],
                  marks: Marks, spans: list[float]) -> None:
    """Queue one sample: pre event, delay kernel (hides the host's launch cost), start event, body, end event.
    Appends its events to `marks` and its host queueing time to `spans`; read them with `settle` after a
    synchronize."""
    pre, begin, end = device_timer.event(), device_timer.event(), device_timer.event()
    pre.record()
    queued = clock()
    if hiding.supported:
        device_timer.sleep(hiding.cycles())
    begin.record()
    body()
    end.record()
    spans.append(clock() - queued)
    marks.append((pre, begin, end))


def queue_cold_sample(device_timer: DeviceTimer, body: Callable[[], Any], hiding: Hiding, clock: Callable[[], float],
                      marks: Marks, spans: list[float]) -> None:
    """One cold sample on an idle GPU: a synchronize (the previous sample has ended), the L2 flush, then
    `queue_bracket`. Queued back to back instead, a sample's bracket counted a varying part of the GPU front end's
    backlog: on an H200 a 1-element fill read 3.0 or 3.6 us from one sample to the next, and the calibrated cost
    moved by up to 0.6 us between calibrations; from an idle GPU both are unimodal and repeat within 0.02 us
    (docs/gpu-timing.md). It is also how ncu and the sync method start each measured call."""
    device_timer.synchronize()
    device_timer.flush()
    queue_bracket(device_timer, body, hiding, clock, marks, spans)


def settle(marks: Marks, spans: list[float], hiding: Hiding, batch: int) -> tuple[list[float], list[bool]]:
    """Per-call seconds of a synchronized chunk of `queue_bracket` samples (`batch` calls in each), and which
    samples were late (see `late_mask`). Updates `hiding` with the delay's measured duration on the GPU."""
    gaps = [p.elapsed_time(b) * 1e-3 for p, b, _ in marks]
    times = [b.elapsed_time(e) * 1e-3 / batch for _, b, e in marks]
    return times, _judge(gaps, spans, hiding)


def _judge(gaps: list[float], spans: list[float], hiding: Hiding) -> list[bool]:
    """Mark late samples (see `late_mask`); the shortest pre-event-to-start-event gap is the delay's own
    duration on the GPU; when over a quarter of a chunk is late, the delay is doubled."""
    if not hiding.supported:
        return [False] * len(gaps)
    if hiding.expected_gap_s <= 0:
        hiding.expected_gap_s = min(gaps)
    hiding.expected_gap_s = min(hiding.expected_gap_s, min(gaps))
    late = late_mask(spans, hiding.expected_gap_s)
    if sum(late) > len(late) // 4 and hiding.delay_s < MAX_DELAY_S:
        hiding.delay_s = min(MAX_DELAY_S, hiding.delay_s * 2)
        hiding.expected_gap_s = 0.0  # re-learn the (longer) delay's duration
        hiding.adjustments += 1
    return late


# ----- work left running after the end event ------------------------------------------------------------------------
# A `solve` that launches its kernel on a stream of its own that does not synchronize with the timed one (a
# non-blocking stream) and returns leaves that kernel running after the end event: the events time little more than
# the launch. After a call's end event has completed, a device-wide synchronize has nothing left to wait for, unless
# such work is still running; its host time, against the same wait with no call, is the check.
LEFTOVER_CALLS = 25  # pairs of (idle, call) waits: their medians hold still where single waits jump by tens of us
LEFTOVER_FLOOR_S = 20e-6  # a median wait shorter than this is never called leftover work
LEFTOVER_FACTOR = 4.0  # ... nor one under this x the synchronize's own median cost with nothing queued
LEFTOVER_EXCESS_S = 5e-6  # short leftovers: the median wait beyond the idle one exceeds this and the call's event time
WORK_LEFT_RUNNING = "work left running"


@dataclass
class AfterEndEvent:
    """Host seconds a device-wide synchronize waited once a call's end event had completed, per call (`waits_s`),
    and with no call between the events (`idle_s`, the synchronize's own cost); the verdict."""

    waits_s: list[float]
    idle_s: list[float]
    verdict: str  # "idle", WORK_LEFT_RUNNING, or "not checked: <why>"
    events_s: list[float] = field(default_factory=list)  # each call's start-to-end event time

    def to_json(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "waits_us": [significant(w * 1e6) for w in self.waits_s],
                "idle_us": [significant(w * 1e6) for w in self.idle_s],
                "events_us": [significant(w * 1e6) for w in self.events_s],
                "rule": (f"work left running when the calls' median wait exceeds max({LEFTOVER_FLOOR_S * 1e6:g} us, "
                         f"{LEFTOVER_FACTOR:g} x the median idle wait), or exceeds the median idle wait by more "
                         f"than max({LEFTOVER_EXCESS_S * 1e6:g} us, the calls' median event time): more work "
                         "after the end event than between the events"),
                "what": ("host time of a device-wide synchronize after the call's end event had completed: work the "
                         "call left on another stream is still running then")}


def work_left_after_end_event(launch: Callable[[], Any], device_timer: DeviceTimer, clock: Callable[[], float],
                              calls: int = LEFTOVER_CALLS) -> AfterEndEvent:
    """Whether `launch()` leaves device work running after its end event (on a stream the events do not see)."""
    waits: list[float] = []
    idle: list[float] = []
    events: list[float] = []
    for _ in range(calls):
        for body, into in ((None, idle), (launch, waits)):
            device_timer.synchronize()
            found = _wait_after_end_event(body, device_timer, clock)
            if found is None:
                device_timer.synchronize()
                return AfterEndEvent([], [], "not checked: the runtime's events cannot be waited on one by one")
            into.append(found[0])
            if body is not None:
                events.append(found[1])
    device_timer.synchronize()
    return AfterEndEvent(waits, idle, leftover_verdict(waits, idle, events), events)


def leftover_verdict(waits: Sequence[float], idle: Sequence[float], events: Sequence[float]) -> str:
    """WORK_LEFT_RUNNING when the synchronize after the calls' end events waits long (against the idle waits), or
    waits longer beyond the idle wait than the calls' own event time (a short solve that leaves its work behind)."""
    wait, idle_wait = statistics.median(waits), statistics.median(idle)
    if wait > max(LEFTOVER_FLOOR_S, LEFTOVER_FACTOR * idle_wait):
        return WORK_LEFT_RUNNING
    if events and wait - idle_wait > max(LEFTOVER_EXCESS_S, statistics.median(events)):
        return WORK_LEFT_RUNNING
    return "idle"


def _wait_after_end_event(body: Callable[[], Any] | None, device_timer: DeviceTimer,
                          clock: Callable[[], float]) -> tuple[float, float] | None:
    """Record start, run `body`, record end; wait for the end event alone; the host time of the device-wide
    synchronize after it and the events' time (None when the events cannot be waited on by themselves)."""
    start, end = device_timer.event(), device_timer.event()
    start.record()
    if body is not None:
        body()
    end.record()
    wait_for_end = getattr(end, "synchronize", None)  # torch.cuda.Event.synchronize: this event only
    if not callable(wait_for_end):
        return None
    wait_for_end()
    began = clock()
    device_timer.synchronize()
    return clock() - began, start.elapsed_time(end) * 1e-3
