"""The event bracket's own cost, measured so it can be subtracted from every sample (`extra["event_offset"]`).

A start/end event pair around one kernel also counts the events' own work and the launch of a kernel
onto an idle GPU, about 2 us on an H200 whatever the kernel. Three modes (`policy.event_offset`, else
$DCUOPT_EVENT_OFFSET, else `calibrated`):

* `calibrated`: once per device, the same cold bracket around 1, 2 and k back-to-back copies of the
  runtime's smallest kernel; (T(k) - T(2)) / (k - 2) is what one more kernel costs, and T(1) minus that
  is the bracket's fixed cost.
* `profiler`: profiled cold samples paired with the profiler's kernel records (CUPTI / roctracer); its
  kernel span is shorter than ncu's `gpu__time_duration`, so it over-corrects by about 1 us.
* `none`: raw event times.

Every result says when no correction could be made, and why.
"""
from __future__ import annotations

import os
import statistics
import weakref
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from .bracket import Hiding, Marks, delay_for, host_launch_seconds, queue_cold_sample, settle
from .device_timer import DeviceTimer, Event, Offset
from .policy import TimingPolicy, significant

OFFSET_ENV = "DCUOPT_EVENT_OFFSET"  # calibrated (default) | profiler | none
OFFSET_MODES = ("calibrated", "profiler", "none")
OFFSET_SAMPLES = 20
OFFSET_LIMIT_S = 10e-6  # an offset above max(this, half the kernel time) is not trusted
CALIBRATION_SAMPLES = 200  # clean samples per kernel count (60 left the offset varying by +/-0.3 us across workers)
CALIBRATION_BATCH = 34  # the long bracket holds this many tiny kernels (32 more than the short one)

ActivityT = TypeVar("ActivityT", bound=tuple[Any, ...])  # (name, seconds) or a device timer.Activity

PROFILER_WHAT = ("per-sample event time minus the summed device durations of the solve's kernels, recorded by the "
                 "profiler (CUPTI / roctracer through torch.profiler) on profiled cold samples; its median is "
                 "subtracted from every cold sample (and offset/batch from hot samples)")
CALIBRATED_WHAT = ("the bracket's fixed cost, measured once per device: the cold bracket (on an idle GPU: flush, delay "
                   "kernel, start event, body, end event) around 1, 2 and `batch` back-to-back copies of the "
                   "runtime's smallest kernel; per_kernel = (T(batch) - T(2)) / (batch - 2) is what one more "
                   "kernel costs, and offset = T(1) - per_kernel is subtracted from every cold sample (offset/batch "
                   "from hot samples)")


def choose_offset_mode(chosen: str = "") -> str:
    """The bracket-correction mode: `chosen` (--dcuopt-event-offset), else $DCUOPT_EVENT_OFFSET, else calibrated."""
    mode = (chosen or os.environ.get(OFFSET_ENV, "")).strip().lower() or "calibrated"
    if mode not in OFFSET_MODES:
        raise ValueError(f"event offset {mode!r} is not a mode; use `calibrated` (the default: the bracket's cost "
                         "measured once per device with a tiny kernel), `profiler` (against CUPTI/roctracer kernel "
                         "records) or `none` (raw event times), via --dcuopt-event-offset or ${OFFSET_ENV}")
    return mode


def event_offset(launch: Callable[[], None], device_timer: DeviceTimer, hiding: Hiding, cold_seconds: Sequence[float],
                 policy: TimingPolicy, clock: Callable[[], float]) -> Offset:
    """The bracket cost to subtract, by the policy's mode (else $DCUOPT_EVENT_OFFSET, else `calibrated`)."""
    mode = choose_offset_mode(policy.event_offset)
    if mode == "none":
        return Offset(False, reason="event offset `none`: raw event times (they include the bracket's cost)")
    cold_median = statistics.median(cold_seconds)
    if mode == "profiler":
        found = _cached_offset(launch, device_timer, hiding, cold_median)
    else:
        found = _cached_bracket(device_timer, hiding, clock)
    if found.applied and min(cold_seconds) <= found.seconds:
        return Offset(False, reason=f"the fastest sample ({min(cold_seconds) * 1e6:.2f} us) is not longer than the "
                                    f"bracket's cost ({found.seconds * 1e6:.2f} us); raw event times",
                      details={"method": mode})
    return found


# ----- calibrated: brackets around tiny kernels ----------------------------------------------
def _cached_bracket(device_timer: DeviceTimer, hiding: Hiding, clock: Callable[[], float]) -> Offset:
    """calibrate_bracket once per device timer (= per device and process): the cost does not depend on the kernel."""
    cache = device_timer.bracket_cache
    if cache is not None and "offset" in cache:
        return cache["offset"].reused()
    offset = calibrate_bracket(device_timer, hiding, clock)
    offset.details["measured_by"] = f"pid {os.getpid()}"  # handed over to later workers (timing.calibration)
    if cache is not None:
        cache["offset"] = offset
    return offset


def calibrate_bracket(device_timer: DeviceTimer, hiding: Hiding, clock: Callable[[], float],
                      samples: int = CALIBRATION_SAMPLES, batch: int = CALIBRATION_BATCH) -> Offset:
    """The event bracket's fixed cost, from brackets around 0, 1, 2 and `batch` tiny kernels (see CALIBRATED_WHAT)."""
    if not hiding.supported:
        return Offset(False, reason="no delay kernel, so the bracket's cost cannot be told apart from the host's "
                                    "launch cost; raw event times")
    if not device_timer.tiny_kernel():
        return Offset(False, reason="this runtime has no tiny kernel to calibrate the bracket with; raw event times")
    tiny = device_timer.tiny_kernel
    host = host_launch_seconds(tiny, device_timer, clock)
    medians = {count: statistics.median(bracketed_samples(device_timer, tiny, count, hiding, host, clock, samples))
               for count in (0, 1, 2, batch)}
    per_kernel = (medians[batch] - medians[2]) / (batch - 2)
    offset = medians[1] - per_kernel
    details = {"method": "calibrated", "empty_pair_us": significant(medians[0] * 1e6),
               "one_kernel_us": significant(medians[1] * 1e6), "two_kernels_us": significant(medians[2] * 1e6),
               "batch_us": significant(medians[batch] * 1e6), "per_kernel_us": significant(per_kernel * 1e6),
               "batch": batch, "samples": samples, "what": CALIBRATED_WHAT}
    if per_kernel <= 0 or not 0 < offset <= OFFSET_LIMIT_S:
        return Offset(False, reason=f"calibration gave per-kernel {per_kernel * 1e6:.2f} us and bracket "
                                    f"{offset * 1e6:.2f} us, outside (0, {OFFSET_LIMIT_S * 1e6:.0f} us]; "
                                    "raw event times", details=details)
    return Offset(True, offset, details=details)


def bracketed_samples(device_timer: DeviceTimer, tiny: Callable[[], Any], count: int, hiding: Hiding,
                      host: Sequence[float], clock: Callable[[], float], samples: int, rounds: int = 40) -> list[float]:
    """Cold-bracket times around `count` back-to-back tiny kernels (late samples dropped, as in sampling)."""
    delay = Hiding(True, hiding.cycles_per_s, delay_for(host, calls=max(1, count), floor_s=hiding.delay_s))

    def body() -> None:
        for _ in range(count):
            tiny()

    accepted: list[float] = []
    times: list[float] = []
    for _ in range(rounds):
        marks: Marks = []
        spans: list[float] = []
        for _ in range(20):
            queue_cold_sample(device_timer, body, delay, clock, marks, spans)
        device_timer.synchronize()
        times, late = settle(marks, spans, delay, 1)
        accepted += [t for t, is_late in zip(times, late, strict=True) if not is_late]
        if len(accepted) >= samples:
            break
    return accepted or times


# ----- profiler: profiled samples against the profiler's kernel records ----------------------
def _cached_offset(launch: Callable[[], None], device_timer: DeviceTimer, hiding: Hiding,
                   cold_median_s: float) -> Offset:
    """calibrate_offset once per bound call (interleaved A/B rounds time the same binding again and again)."""
    cache = device_timer.offset_cache
    owner = getattr(launch, "__self__", launch)  # a bound method is a new object each time; its object is not
    hit = cache.get(id(owner)) if cache is not None else None
    if hit is not None and hit[0]() is owner:  # the same live object, not a recycled id
        return hit[1].reused()
    offset = calibrate_offset(launch, device_timer, hiding, cold_median_s)
    if cache is not None:
        try:
            cache[id(owner)] = (weakref.ref(owner), offset)
        except TypeError:  # not weak-referenceable: calibrate every time
            pass
    return offset


def bracket_offset(event_seconds: Sequence[float], device_seconds: Sequence[float],
                   limit_s: float) -> tuple[float | None, str]:
    """Median of (event - device) per sample, or None with the reason it cannot be trusted."""
    if not event_seconds or len(event_seconds) != len(device_seconds):
        return None, "no paired samples"
    gaps = sorted(e - d for e, d in zip(event_seconds, device_seconds, strict=True))
    offset = statistics.median(gaps)
    if offset < 0:
        return None, f"the profiler's kernel time exceeds the event time by {-offset * 1e6:.2f} us"
    if offset > limit_s:
        return None, f"offset {offset * 1e6:.2f} us is implausibly large (over {limit_s * 1e6:.1f} us)"
    return offset, ""


def calibrate_offset(launch: Callable[[], None], device_timer: DeviceTimer, hiding: Hiding, cold_median_s: float,
                     samples: int = OFFSET_SAMPLES) -> Offset:
    """Profile a few cold samples exactly as they are timed; pair each event time with the kernels' own time."""
    def flush_and_delay() -> None:  # what every sample queues before the solve: its activities are not the solve's
        device_timer.flush()
        if hiding.supported:
            device_timer.sleep(1000)

    infra = device_timer.profile_device(flush_and_delay)
    if not infra:
        return Offset(False, reason="the profiler recorded no device activity (this runtime has no profiler hook, "
                                    "or CUPTI/roctracer is unavailable); raw event times (they include the bracket's "
                                    "cost)")
    marks: list[tuple[Event, Event]] = []

    def body() -> None:
        for _ in range(samples):
            device_timer.flush()
            begin, end = device_timer.event(), device_timer.event()
            if hiding.supported:
                device_timer.sleep(hiding.cycles())
            begin.record()
            launch()
            end.record()
            marks.append((begin, end))

    activities = device_timer.profile_device(body)
    if not activities:
        return Offset(False, reason="profiling the samples failed; raw event times")
    grouped = split_activities(activities, [name for name, _ in infra], samples)
    if isinstance(grouped, str):
        return Offset(False, reason=grouped + "; raw event times")
    device = [sum(duration for _, duration in group) for group in grouped]
    names = {name for group in grouped for name, _ in group}
    ours = len(grouped[0])
    events = [b.elapsed_time(e) * 1e-3 for b, e in marks]
    offset, why = bracket_offset(events, device, limit_s=max(OFFSET_LIMIT_S, 0.5 * cold_median_s))
    if offset is None:
        return Offset(False, reason=why + "; raw event times")
    return Offset(True, offset, details={"method": "profiler", "samples": samples,
                                         "device_median_us": significant(statistics.median(device) * 1e6),
                                         "profiled_event_median_us": significant(statistics.median(events) * 1e6),
                                         "activities_per_call": ours, "kernels": sorted(names)[:8],
                                         "what": PROFILER_WHAT})


def split_activities(activities: Sequence[ActivityT], infra: Sequence[str],
                     samples: int) -> list[list[ActivityT]] | str:
    """The solve's own device activities of each profiled sample, or why they cannot be told apart.

    Each sample queues the flush/delay activities (`infra`, learnt by profiling them alone) and then the
    solve's. First by position (robust when the solve runs the same kernels as the flush); failing that,
    by dropping every activity named like an infra one. An activity is any tuple whose first item is its name.
    """
    per_sample, rest = divmod(len(activities), samples)
    if not rest and per_sample > len(infra):
        chunks = [list(activities[i * per_sample:(i + 1) * per_sample]) for i in range(samples)]
        if all([item[0] for item in chunk[:len(infra)]] == list(infra) for chunk in chunks):
            return [chunk[len(infra):] for chunk in chunks]
    ours = [item for item in activities if item[0] not in set(infra)]
    per_sample, rest = divmod(len(ours), samples)
    if rest or per_sample < 1:
        return (f"{len(activities)} device activities for {samples} samples do not split into the flush/delay "
                f"activities ({', '.join(infra)}) and the solve's")
    return [ours[i * per_sample:(i + 1) * per_sample] for i in range(samples)]
