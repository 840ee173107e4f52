"""Device timing for GPU kernels (every GPU toolchain: CUDA, HIP on NVIDIA, HIP/DTK on AMD and DCU).

The method (docs/gpu-timing.md has the reasoning and the H200 evidence), in the order data flows:

* **Warm-up by time**: flushed calls until `policy.warmup_s` has passed (clocks up, modules loaded).
* **Every call prepared alike** (`timing.host.between_calls`: the worker's `TimedCalls`): before each warm-up call
  and each cold sample, outside its bracket, the inputs are rotated in their buffers (on the device where the
  runtime can: `Runtime.roll_into`), and after it the calls the pytest process chose at random from the run's secret
  seed are snapshotted and compared there. The other calls (detection, hot batches, side figures) reuse the last
  call's inputs; the sync method's samples too (its profiler session would record the rotation's copies).
* **Method** (`extra["method"]`): after warm-up, `timing.sync.detect_sync` times one call behind a long delay
  kernel (`extra["sync_detected"]`). A call that waits for the device (cudaDeviceSynchronize, a blocking
  cudaMemcpy, cudaFree) cannot be hidden behind a delay kernel: it is timed by `timing.sync` (`"sync"`: one
  call per sample on an idle GPU, the kernels' time from the profiler's records, `extra["sync"]`). Every other
  call by the rest of this list (`"async"`). `policy.timing_method` / $DCUOPT_TIMING_METHOD can force either.
* **Launch hiding** (`timing.bracket`): every sample is one event pair behind a delay kernel that holds
  the GPU while the host queues start event, `solve` and end event; late samples are discarded.
* **Cold samples** (`Samples.seconds`, what pytest-benchmark stores): each sample starts on an idle GPU
  (`bracket.queue_cold_sample`); before it, on the stream the kernel uses, the L2 is flushed by *reading* a
  buffer of 2x the device's L2 (so the cache holds
  clean, unrelated lines: the kernel neither hits its own data nor pays for writing back the flush's
  dirty lines; `timing.device_timer`).
* **Noise-based stopping**: `policy.should_stop` (min samples, min time, median CI half-width target,
  time cap), checked after each chunk of queued samples. Fewer than `min_samples` clean samples when it
  stops is `extra["quality"] = "too few clean samples"` (else `"ok"`): such a median is not a measurement.
* **Hot samples** (`extra["hot"]`): back-to-back calls behind one delay kernel, no flush, one event
  pair around the batch divided by its size; with **input rotation** (`extra["hot_rotated"]`) over
  enough input sets to exceed 3x the L2 when one set would be cache-resident. Never mixed with cold.
  A side figure (below) unless `policy.cold` is off, when hot samples are the primary ones.
* **Event bracket cost removed** (`timing.offset`, `extra["event_offset"]`): subtracted from every cold
  sample (offset/batch from hot ones); the record keeps the raw event median beside the corrected one
  and says when no correction could be made.
* **Side measurements** (`timing.side_figures`): the original skill's number in `extra["seed_method"]`, the host
  cost of one call in `extra["launch_overhead"]`, and clocks / temperature before, during and after
  sampling in `extra["telemetry"]`. Hot, hot-rotated, the original method and the launch overhead cost time
  every branch: they are taken only with `policy.side_figures` (the plugin's --dcuopt-side-figures), else
  recorded as absent with the reason (`side.absent_side_figure`).
* **Work left running after the end event** (`timing.bracket.work_left_after_end_event`,
  `extra["after_end_event"]`): right after warm-up, 25 unbracketed calls, each followed by a wait for its end
  event alone and then a host-timed device-wide synchronize, against the same with no call. A call whose
  synchronize still waits (median over max(20 us, 4x the median idle wait)) left work on a stream the events do
  not see: its samples time the launch, not the work. The verdict `work left running` fails the branch's benchmark
  (bench/run.py) and excludes it from champion.
* **Work outside the timed window** (`timing.outside_window`, `extra["outside_window"]`): a few cold samples queued
  as measured under the profiler, whose records cover every stream and thread: call activity before a sample's
  start event (on a stream that ran during the delay kernel) or after its end event fails the branch the same way.
* **Calibrations once per device** (`timing.calibration`): the delay kernel's rate and the calibrated bracket
  cost live in the device timer's caches; the pytest process hands the first worker's to later workers on the device.

Everything device-specific goes through a `timing.device_timer.DeviceTimer`;
`toolchains.torch_device_timer.TorchDeviceTimer` implements it over `torch.cuda`.
"""
from __future__ import annotations

import itertools
import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .bracket import (
    Hiding,
    Marks,
    cached_hiding,
    delay_for,
    host_launch_seconds,
    queue_bracket,
    queue_cold_sample,
    settle,
    work_left_after_end_event,
)
from .device_timer import DeviceTimer
from .host import between_calls
from .offset import event_offset
from .outside_window import work_outside_window
from .policy import Samples, TimingPolicy, choose_method, sample_quality, should_stop, significant
from .side_figures import absent_side_figure, describe_samples, launch_overhead, seed_method
from .sync import Detection, SyncSampled, detect_sync, sample_sync, sync_record
from .sync_hooks import SyncMarks, sample_marked

ROTATION_TARGET = 3.0  # rotate over input sets totalling at least this x L2
MAX_ROTATION_SETS = 64
MAX_ROTATION_BYTES = 8 * 1024**3
HOT_BATCH_TARGET_S = 100e-6  # GPU time per hot batch
MAX_HOT_BATCH = 64
WARMUP_MIN_CALLS = 4  # one more than exchange.checked_call_numbers' `guaranteed` calls minus the samples it counts on
Between = tuple[Callable[[], None], Callable[[], None]]  # before and after a call, untimed (timing.host.between_calls)
PROFILER_TIMER = "device activity records (torch.profiler: CUPTI / roctracer)"
ASYNC_WHAT = ("launch hiding: per sample, on an idle GPU, an L2 flush, a delay kernel, then an event pair around one "
              "call queued while the delay runs (late samples dropped)")
SYNC_WHAT = ("one call per sample on an idle GPU, no launch hiding (nvbench's exec_tag::sync); the primary figure is "
             "timing.sync.primary")


def rotation_sets(working_set_bytes: int, l2_bytes: int) -> int:
    """How many input sets the hot measurement rotates over (1 = the set is not cache-resident)."""
    if working_set_bytes <= 0 or l2_bytes <= 0 or working_set_bytes >= ROTATION_TARGET * l2_bytes / 2:
        return 1
    wanted = math.ceil(ROTATION_TARGET * l2_bytes / working_set_bytes)
    by_memory = max(1, MAX_ROTATION_BYTES // working_set_bytes)
    return int(max(1, min(wanted, MAX_ROTATION_SETS, by_memory)))


def hot_batch_for(cold_median_s: float) -> int:
    if cold_median_s <= 0:
        return 1
    return int(max(1, min(MAX_HOT_BATCH, math.ceil(round(HOT_BATCH_TARGET_S / cold_median_s, 6)))))


def chunk_size_for(sample_gpu_s: float, target_s: float = 0.02, lo: int = 5, hi: int = 200) -> int:
    if sample_gpu_s <= 0:
        return lo
    return int(max(lo, min(hi, target_s / sample_gpu_s)))


@dataclass
class Sampled:
    seconds: list[float]
    reason: str
    late: int = 0
    clocks_mhz: list[float] = field(default_factory=list)
    clean: int = -1  # on-time samples among `seconds` (-1: all of them)

    @property
    def clean_count(self) -> int:
        return len(self.seconds) if self.clean < 0 else self.clean


def choose_device_method(detection: Detection, chosen: str) -> tuple[str, str]:
    """async or sync, and why (`chosen`: the policy's method after `choose_method`)."""
    if chosen != "auto":
        return chosen, f"{chosen}: chosen (timing_method / $DCUOPT_TIMING_METHOD); detection said {detection.verdict}"
    if detection.verdict == "sync":
        return "sync", "auto: the call waited for the device behind a delay kernel (timing.sync_detected)"
    return "async", f"auto: detection said {detection.verdict}"


def measure_device(launches: Sequence[Callable[[], None]], policy: TimingPolicy, device_timer: DeviceTimer,
                   working_set_bytes: int = 0, clock: Callable[[], float] = time.perf_counter,
                   sync_marks: SyncMarks | None = None) -> Samples:
    """Time `launches[0]` cold and hot (and rotate over all `launches` for hot when they are several).
    `sync_marks`: the kernel library's sync hooks, used when the call waits for the device (timing.sync_hooks)."""
    launch = launches[0]
    between = between_calls(launch)
    before = device_timer.telemetry()
    warmup_calls = _warm_up(launch, device_timer, policy.warmup_s, clock, between)
    after_end = work_left_after_end_event(launch, device_timer, clock)
    hiding = cached_hiding(device_timer)
    detection = detect_sync(launch, device_timer, hiding, clock)
    method, why = choose_device_method(detection, choose_method(policy.timing_method))
    if method == "sync":
        synced = _measure_sync(launches, policy, device_timer, hiding, detection, why, before, warmup_calls,
                               working_set_bytes, clock, sync_marks)
        synced.extra["after_end_event"] = after_end.to_json()
        return synced
    host = host_launch_seconds(launch, device_timer, clock)
    hiding.delay_s = delay_for(host)
    cold = _sample_cold(launch, device_timer, policy, hiding, clock, between)
    cold_median = statistics.median(cold.seconds)
    batch = hot_batch_for(cold_median)
    hot_policy = _hot_policy(policy)
    # Hot samples are a side figure, unless they are the primary one (policy.cold off).
    hot = (_sample_hot([launch], device_timer, hot_policy, hiding, host, batch, clock)
           if policy.side_figures or not policy.cold else None)
    offset = event_offset(launch, device_timer, hiding, cold.seconds, policy, clock)
    outside = work_outside_window(launch, device_timer, hiding, clock)
    raw_cold_median = cold_median
    if offset.applied:
        cold.seconds = [t - offset.seconds for t in cold.seconds]
        if hot is not None:
            hot.seconds = [t - offset.seconds / batch for t in hot.seconds]
        cold_median = statistics.median(cold.seconds)
    extra: dict[str, Any] = {
        "method": "async", "method_what": ASYNC_WHAT, "method_reason": why, "sync_detected": detection.to_json(),
        "flush": device_timer.flush_info(),
        "launch_hiding": hiding.to_json(),
        "event_offset": {**offset.to_json(), "raw_event_median_ms": significant(raw_cold_median * 1e3)},
        "stream": "events and kernel on the runtime's current stream (the legacy default stream for a C ABI solve)",
        "late_samples_discarded": cold.late,
        "hot": (describe_samples(hot.seconds, batch=batch, stop_reason=hot.reason, late_discarded=hot.late,
                                 what="back-to-back calls behind one delay kernel, no flush, the same inputs")
                if hot is not None else absent_side_figure(batch=batch)),
    }
    sets = len(launches)
    extra["rotation"] = _rotation(working_set_bytes, sets, device_timer)
    if not policy.side_figures:
        extra["hot_rotated"] = absent_side_figure()
    elif sets > 1:
        rotated = _sample_hot(list(launches), device_timer, hot_policy, hiding, host, batch, clock)
        if offset.applied:
            rotated.seconds = [t - offset.seconds / batch for t in rotated.seconds]
        extra["hot_rotated"] = describe_samples(rotated.seconds, batch=batch, sets=sets, stop_reason=rotated.reason,
                                                what="back-to-back calls over rotating input sets, no flush")
    extra.update(_side_figures(launch, device_timer, policy, host, cold_median))
    extra["samples_ms"] = [significant(s * 1e3) for s in cold.seconds]
    extra["telemetry"] = {"before": before, "after": device_timer.telemetry(),
                          "sm_clock_mhz_during": _clock_summary(cold.clocks_mhz)}
    chosen = cold if policy.cold or hot is None else hot
    primary, mode, reason = chosen.seconds, ("cold" if policy.cold else "hot"), chosen.reason
    extra.update(sample_quality(chosen.clean_count, policy, reason))
    if not policy.cold:
        extra["cold"] = describe_samples(cold.seconds, stop_reason=cold.reason)
    extra["after_end_event"] = after_end.to_json()
    extra["outside_window"] = outside.to_json()
    return Samples(primary, device_timer.timer, mode, reason, warmup_calls, extra)


def _measure_sync(launches: Sequence[Callable[[], None]], policy: TimingPolicy, device_timer: DeviceTimer,
                  hiding: Hiding, detection: Detection, why: str, before: dict[str, Any], warmup_calls: int,
                  working_set_bytes: int, clock: Callable[[], float], sync_marks: SyncMarks | None) -> Samples:
    """The sync method (timing.sync): the library's sync hooks when it has them, else one call per sample on an idle
    GPU with the profiler's records; flushed when the policy is cold."""
    launch = launches[0]
    marked, profiled, marks_note = _sample_sync_call(launch, device_timer, policy, hiding, clock, sync_marks)
    sampled = marked or profiled
    assert sampled is not None
    timer = {"kernels": PROFILER_TIMER, "kernels_marked": f"{device_timer.timer} (sync hooks)"}.get(
        sampled.primary, device_timer.timer)
    mode = "cold" if policy.cold else "hot"
    other = "hot" if policy.cold else "cold"
    extra: dict[str, Any] = {
        "method": "sync", "method_what": SYNC_WHAT, "method_reason": why, "sync_detected": detection.to_json(),
        "sync": {**sync_record(sampled, policy, timer), "hooks": marks_note,
                 "profiler_figures": (sync_record(profiled, policy, PROFILER_TIMER) if marked and profiled
                                      else absent_side_figure())},
        "flush": device_timer.flush_info() if policy.cold else {"mode": "none", "why": "hot samples: no flush"},
        "launch_hiding": {"method": "none: the call waits for the device, so no delay kernel can hide its launch; "
                                    "one call per sample on an idle GPU"},
        "event_offset": ({"applied": True, "reason": "per event segment of the sync hooks (timing.sync.hooks)"}
                         if marked else
                         {"applied": False, "reason": "method sync: the primary figure comes from the profiler's "
                                                      "activity records (or is the event_span, said in timing.sync)"}),
        "stream": "one call per sample, synchronized before and after; events on the runtime's current stream",
        "late_samples_discarded": 0,
        other: {"n": 0, "skipped": f"method sync: one {mode} measurement only (nvbench's exec_tag::sync has no batch "
                                   "measurement either)"},
        "rotation": _rotation(working_set_bytes, len(launches), device_timer),
        "seed_method": seed_method(launch, device_timer) if policy.side_figures else absent_side_figure(),
        "samples_ms": [significant(s * 1e3) for s in sampled.seconds],
        "telemetry": {"before": before, "after": device_timer.telemetry(), "sm_clock_mhz_during": None},
    }
    extra.update(sample_quality(len(sampled.seconds), policy, sampled.reason))
    return Samples(list(sampled.seconds), timer, mode, sampled.reason, warmup_calls, extra)


def _side_figures(launch: Callable[[], None], device_timer: DeviceTimer, policy: TimingPolicy, host: Sequence[float],
                  cold_median_s: float) -> dict[str, Any]:
    """The original method's number and the launch overhead, or why they were not measured (opt-in)."""
    if not policy.side_figures:
        return {"seed_method": absent_side_figure(), "launch_overhead": absent_side_figure()}
    return {"seed_method": seed_method(launch, device_timer),
            "launch_overhead": launch_overhead(launch, device_timer, host, cold_median_s)}


def _rotation(working_set_bytes: int, sets: int, device_timer: DeviceTimer) -> dict[str, Any]:
    resident = bool(working_set_bytes and working_set_bytes < ROTATION_TARGET * device_timer.l2_bytes / 2)
    return {"working_set_bytes": working_set_bytes, "l2_bytes": device_timer.l2_bytes, "sets": sets,
            "covers_bytes": sets * working_set_bytes, "resident": resident}


def _hot_policy(policy: TimingPolicy) -> TimingPolicy:
    """The budget of a hot measurement: no warm-up (the cold one warmed up), a quarter of the time."""
    return TimingPolicy(warmup_s=0.0, min_samples=policy.min_samples, max_samples=policy.max_samples,
                        target_rel_spread=policy.target_rel_spread, min_time_s=min(policy.min_time_s, 0.05),
                        max_time_s=max(0.05, policy.max_time_s / 4), cold=False)


def _clock_summary(clocks_mhz: Sequence[float]) -> dict[str, float] | None:
    """The SM clock read after each chunk of cold samples (unreadable reads are 0 and left out)."""
    clocks = [c for c in clocks_mhz if c]
    if not clocks:
        return None
    return {"min": min(clocks), "median": statistics.median(clocks), "max": max(clocks), "reads": len(clocks)}


def _warm_up(launch: Callable[[], None], device_timer: DeviceTimer, warmup_s: float, clock: Callable[[], float],
             between: Between | None = None) -> int:
    """At least WARMUP_MIN_CALLS calls, prepared like the cold samples' (`between`): the checked call among the first
    ones (`exchange.checked_call_numbers`) is reached whatever the method."""
    prepare, finish = between or between_calls(launch)
    calls, start = 0, clock()
    while calls < WARMUP_MIN_CALLS or clock() - start < warmup_s:
        prepare()
        device_timer.flush()
        launch()
        finish()
        calls += 1
        if calls % 50 == 0:
            device_timer.synchronize()  # keep the queue short so the time budget means GPU time
    device_timer.synchronize()
    return calls


def _sample_cold(launch: Callable[[], None], device_timer: DeviceTimer, policy: TimingPolicy, hiding: Hiding,
                 clock: Callable[[], float], between: Between | None = None) -> Sampled:
    """Cold samples, each on an idle GPU; `between` runs before and after each one, outside its bracket (the inputs
    rotated for the next call, the checked calls' snapshots; default: the launch's own, `between_calls`)."""
    prepare, finish = between or between_calls(launch)
    accepted: list[float] = []
    late_total = 0
    clocks: list[float] = []
    chunk = 5
    start = clock()
    while True:
        marks: Marks = []
        spans: list[float] = []
        for _ in range(chunk):
            prepare()  # queued before the sample's synchronize: done before its flush and bracket
            queue_cold_sample(device_timer, launch, hiding, clock, marks, spans)
            finish()  # a snapshot waits for the sample; its copies come after the end event
        device_timer.synchronize()
        clocks.append(device_timer.telemetry().get("sm_clock_mhz") or 0.0)
        times, late = settle(marks, spans, hiding, 1)
        late_total += sum(late)
        accepted, reason, clean = _keep(accepted, times, late, clock() - start, policy)
        if reason:
            return Sampled(accepted, reason, late_total, clocks, clean)
        per_sample = max(times) + hiding.expected_gap_s
        chunk = chunk_size_for(per_sample + 50e-6)


def _sample_hot(launches: Sequence[Callable[[], None]], device_timer: DeviceTimer, policy: TimingPolicy,
                hiding: Hiding, host: Sequence[float], batch: int, clock: Callable[[], float]) -> Sampled:
    delay = Hiding(hiding.supported, hiding.cycles_per_s, delay_for(host, calls=batch, floor_s=hiding.delay_s))
    accepted: list[float] = []
    late_total, start = 0, clock()
    rotation = itertools.cycle(launches)

    def batch_of_calls() -> None:
        for _ in range(batch):
            next(rotation)()

    while True:
        marks: Marks = []
        spans: list[float] = []
        for _ in range(5):
            queue_bracket(device_timer, batch_of_calls, delay, clock, marks, spans)
        device_timer.synchronize()
        times, late = settle(marks, spans, delay, batch)
        late_total += sum(late)
        accepted, reason, clean = _keep(accepted, times, late, clock() - start, policy)
        if reason:
            return Sampled(accepted, reason, late_total, clean=clean)


def _keep(accepted: list[float], times: list[float], late: list[bool], elapsed: float,
          policy: TimingPolicy) -> tuple[list[float], str | None, int]:
    """Add the chunk's on-time samples; the stopping rule, with a hard cap when too few are on time.
    Returns the samples, the stop reason (None: go on) and how many of the samples are clean (on time)."""
    accepted = accepted + [t for t, is_late in zip(times, late, strict=True) if not is_late]
    reason = should_stop(accepted, elapsed, policy) if accepted else None
    if reason is None and elapsed >= 2 * policy.max_time_s + 1.0:
        if not accepted:
            return list(times), f"time cap ({policy.max_time_s:g} s) with no clean sample; late samples kept", 0
        reason = f"time cap ({policy.max_time_s:g} s) with too few clean samples"
    return accepted, reason, len(accepted)


def _sample_sync_call(launch: Callable[[], None], device_timer: DeviceTimer, policy: TimingPolicy, hiding: Hiding,
                      clock: Callable[[], float], marks: SyncMarks | None
                      ) -> tuple[SyncSampled | None, SyncSampled | None, str]:
    """(marked samples, profiled samples, what the hooks did): the hooks when they work (the profiler's figures
    then only as a side figure), else the profiler's records."""
    if marks is None:
        note = "none: the kernel library has no sync hooks (only `.cu` sources built by the cuda toolchain have them)"
    else:
        def bracket_s(first_segments: list[float]) -> float:
            found = event_offset(launch, device_timer, hiding, first_segments, policy, clock)
            return found.seconds if found.applied else 0.0

        marked = sample_marked(launch, marks, device_timer, policy, hiding, clock, policy.cold, bracket_s)
        if not isinstance(marked, str):
            profiled = (sample_sync(launch, device_timer, policy, hiding, clock, flush=policy.cold)
                        if policy.side_figures else None)
            return marked, profiled, "used: the primary figure is kernels_marked"
        note = f"not used: {marked}; the profiler's records are the primary figure"
    return None, sample_sync(launch, device_timer, policy, hiding, clock, flush=policy.cold), note
