"""Device work a call does outside its timed window, from the profiler's records of every stream and thread.

The event bracket times what runs on the kernel's stream between its start and end events. A `solve` can put its
work where the events do not look: on a stream of its own that runs *during* the delay kernel that hides the launch
(it waits for nothing on the timed stream), on another host thread that launches after `solve` returns, or as a
short leftover after the end event. The host-side check after the end event (`bracket.work_left_after_end_event`)
sees only work still running then, and only when it is longer than the synchronize's own jitter.

Here a few cold samples are queued exactly as measured (idle GPU, flush, delay kernel, start event, call, end
event) inside one profiler session, which records the device activity of every stream the process uses (CUPTI /
roctracer trace at the driver, whatever thread launched). Each sample's window is its delay kernel's end (where the
start event stands) plus its bracket's event time; the harness's own activities (the flush, the delay kernel) are
known by name and place. A call activity outside every window is work outside the timed window: the branch's
samples time something else than its work (`check/checked_calls.py` rejects it like work left running).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .bracket import Hiding, Marks, queue_cold_sample
from .device_timer import Activity, DeviceTimer
from .policy import significant

OUTSIDE_SAMPLES = 5
WINDOW_SLACK_S = 1e-6  # event timestamps and activity records disagree by well under a microsecond
WINDOW_SLACK_SHARE = 0.05  # ... or this share of the window, for long ones
OUTSIDE_FLOOR_S = 0.5e-6  # outside work per sample below this is noise at the window's edges
WORK_OUTSIDE_WINDOW = "work outside the timed window"
SPIN_CYCLES = 1000  # the delay kernel alone, to learn its activity name


@dataclass
class OutsideWindow:
    """Per profiled sample: its window (seconds of event time) and the seconds of call activity outside every
    window; the activities found outside (name, seconds), and the verdict."""

    verdict: str  # "inside", WORK_OUTSIDE_WINDOW, or "not checked: <why>"
    windows_s: list[float] = field(default_factory=list)
    outside_s: list[float] = field(default_factory=list)
    outside: list[tuple[str, float]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "windows_us": [significant(w * 1e6) for w in self.windows_s],
                "outside_us": [significant(w * 1e6) for w in self.outside_s],
                "outside_activities": [[name[:120], significant(s * 1e6)] for name, s in self.outside[:10]],
                "rule": (f"{WORK_OUTSIDE_WINDOW} when, in most of {OUTSIDE_SAMPLES} profiled cold samples, device "
                         f"activity of the call (any stream, any thread) lies outside the sample's window (the delay "
                         f"kernel's end plus the events' time, +-max({WINDOW_SLACK_S * 1e6:g} us, "
                         f"{WINDOW_SLACK_SHARE:.0%})) for more than {OUTSIDE_FLOOR_S * 1e6:g} us"),
                "what": "the profiler's records of every stream during cold samples queued as measured"}


def work_outside_window(launch: Callable[[], Any], device_timer: DeviceTimer, hiding: Hiding,
                        clock: Callable[[], float], samples: int = OUTSIDE_SAMPLES) -> OutsideWindow:
    """Queue `samples` cold samples of `launch()` under the profiler and judge where their device work ran."""
    if not hiding.supported:
        return OutsideWindow("not checked: the runtime has no delay kernel, so samples have no window to hide from")
    names = _harness_names(device_timer)
    if names is None:
        return OutsideWindow(f"not checked: no profiler records ({device_timer.profiler_problem or 'no hook'})")
    flush_names, spin_name = names
    marks: Marks = []
    spans: list[float] = []

    def body() -> None:
        for _ in range(samples):
            queue_cold_sample(device_timer, launch, hiding, clock, marks, spans)

    activities = device_timer.profile_activities(body)
    device_timer.synchronize()
    if activities is None:
        return OutsideWindow(f"not checked: no profiler records ({device_timer.profiler_problem or 'no hook'})")
    windows = [begin.elapsed_time(end) * 1e-3 for _, begin, end in marks]
    return judge_windows(activities, windows, flush_names, spin_name)


def judge_windows(activities: Sequence[Activity], windows: Sequence[float], flush_names: Sequence[str],
                  spin_name: str) -> OutsideWindow:
    """The verdict from the profiler's records of the profiled samples and each sample's event time (see the module
    docstring): the i-th delay kernel opens sample i's window."""
    ordered = sorted(activities, key=lambda a: a.start_s)
    spins = [a for a in ordered if a.name == spin_name]
    if len(spins) != len(windows):
        return OutsideWindow(f"not checked: {len(spins)} delay kernels in the profiler's records for {len(windows)} "
                             "samples")
    opened = [(spin.end_s, spin.end_s + window) for spin, window in zip(spins, windows, strict=True)]
    harness = {id(spin) for spin in spins}
    starts = []  # where each sample begins: its flush, else its delay kernel
    for index, spin in enumerate(spins):  # each sample's flush: flush-named, after the last window, before its spin
        after = opened[index - 1][1] if index else float("-inf")
        flush = [a for a in ordered if a.name in flush_names and a.start_s >= after and a.end_s <= spin.start_s]
        harness |= {id(a) for a in flush}
        starts.append(min([spin.start_s, *(a.start_s for a in flush)]))
    outside_s = [0.0] * len(windows)
    outside: list[tuple[str, float]] = []
    for activity in ordered:
        if id(activity) in harness:
            continue
        index = _sample_of(activity, starts)
        low, high = opened[index]
        slack = max(WINDOW_SLACK_S, WINDOW_SLACK_SHARE * (high - low))
        beyond = max(0.0, (low - slack) - activity.start_s) + max(0.0, activity.end_s - (high + slack))
        if beyond > 0:
            outside_s[index] += min(beyond, activity.seconds)
            outside.append((activity.name, activity.seconds))
    flagged = sum(seconds > OUTSIDE_FLOOR_S for seconds in outside_s)
    verdict = WORK_OUTSIDE_WINDOW if flagged * 2 > len(windows) else "inside"
    return OutsideWindow(verdict, list(windows), outside_s, outside)


def _sample_of(activity: Activity, sample_starts: Sequence[float]) -> int:
    """The sample an activity belongs to: the last that had begun (its flush or delay kernel started) when the
    activity started (work launched during a sample's flush or delay, or left after its end event, is that
    sample's), else the first."""
    return max((i for i, start in enumerate(sample_starts) if start <= activity.start_s), default=0)


def _harness_names(device_timer: DeviceTimer) -> tuple[list[str], str] | None:
    """The activity names of the flush and of the delay kernel, learnt by profiling them alone once per device
    timer; None when the profiler records nothing here."""
    cache = device_timer.activity_cache
    key = "outside-window:harness"
    if cache is not None and key in cache:
        found = cache[key]
        return found[:-1], found[-1]
    flush = device_timer.profile_activities(device_timer.flush)
    spin = device_timer.profile_activities(lambda: device_timer.sleep(SPIN_CYCLES))
    device_timer.synchronize()
    if flush is None or not spin:
        return None
    names = [a.name for a in flush] + [spin[-1].name]
    if cache is not None:
        cache[key] = names
    return names[:-1], names[-1]
