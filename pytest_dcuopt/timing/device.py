"""Device timing for GPU kernels (every GPU toolchain: CUDA, HIP on NVIDIA, HIP/DTK on AMD and DCU).

The method (docs/gpu-timing.md has the reasoning and the H200 evidence):

* **Warm-up by time**: flushed calls until `policy.warmup_s` has passed (clocks up, modules loaded).
* **Cold samples** (`Samples.seconds`, what pytest-benchmark stores): for each sample, on the stream the
  kernel uses, (1) the L2 is flushed by *reading* a buffer of 2x the device's L2 (so the cache holds
  clean, unrelated lines: the kernel neither hits its own data nor pays for writing back the flush's
  dirty lines), (2) a delay kernel (`torch.cuda._sleep`) holds the GPU while the host enqueues
  (3) the start event, `solve`, and the end event. One event pair per sample; the flush and the delay
  lie outside it, and ctypes/launch latency is hidden because the whole sample is queued before the
  delay ends. A sample whose host-side queueing (delay kernel to end event) took longer than the delay
  runs on the GPU (measured by an event before the delay) may have let the GPU idle inside the timed
  window: it is discarded, and when that happens often the delay is doubled.
* **Event bracket cost removed** (`policy.event_offset`, `extra["event_offset"]`): a start/end event pair
  around one kernel also counts the events' own work and the launch of a kernel onto an idle GPU, about
  2 us on an H200 whatever the kernel. `calibrated` (the default) measures it once per device: the same
  bracket (flush, delay, events) around 1, 2 and k back-to-back copies of the runtime's smallest kernel;
  (T(k) - T(2)) / (k - 2) is what one more kernel costs, and T(1) minus that is the bracket's fixed cost,
  subtracted from every cold sample (offset/batch from hot ones). `profiler` pairs profiled samples with
  the profiler's kernel records instead (CUPTI / roctracer; its kernel span is shorter than ncu's
  `gpu__time_duration`, so it over-corrects by about 1 us); `none` keeps raw event times. The record keeps
  the raw event median beside the corrected one and says when no correction could be made.
* **Noise-based stopping**: `policy.should_stop` (min samples, min time, median CI half-width target,
  time cap), checked after each chunk of queued samples.
* **Hot samples** (`extra["hot"]`): back-to-back calls behind one delay kernel, no flush, one event
  pair around the batch divided by its size; with **input rotation** (`extra["hot_rotated"]`) over
  enough input sets to exceed 3x the L2 when one set would be cache-resident. Never mixed with cold.
* **Side measurements**: the original skill's number (one event pair around 20 back-to-back calls
  after 10 warm-ups, no flush) in `extra["seed_method"]`, the host cost of one `solve` call and the
  latency that leaks into an unhidden single-call measurement in `extra["launch_overhead"]`, and
  clocks / temperature before, during and after sampling in `extra["telemetry"]`.

Everything device-specific goes through a `DeviceBackend`; `TorchBackend` implements it over
`torch.cuda` (CUDA or ROCm builds of torch alike).
"""
from __future__ import annotations

import itertools
import math
import os
import statistics
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from .policy import Samples, TimingPolicy, should_stop, summarize

FLUSH_ENV = "DCUOPT_L2_FLUSH"  # read (default) | write | none
FLUSH_MODES = ("read", "write", "none")
FLUSH_FACTOR = 2.0  # flush buffer = this x L2
FALLBACK_L2_BYTES = 128 * 1024 * 1024  # when the L2 size cannot be read: flush 256 MiB (Triton's size)
ROTATION_TARGET = 3.0  # rotate over input sets totalling at least this x L2
MAX_ROTATION_SETS = 64
MAX_ROTATION_BYTES = 8 * 1024**3
MIN_DELAY_S = 20e-6
MAX_DELAY_S = 5e-3
HOT_BATCH_TARGET_S = 100e-6  # GPU time per hot batch
MAX_HOT_BATCH = 64
LATE_MARGIN = 0.9  # a sample is clean when its host queueing took under this fraction of the delay
SEED_WARMUP, SEED_REPEAT = 10, 20
OFFSET_ENV = "DCUOPT_EVENT_OFFSET"  # calibrated (default) | profiler | none
OFFSET_MODES = ("calibrated", "profiler", "none")
OFFSET_SAMPLES = 20
OFFSET_LIMIT_S = 10e-6  # an offset above max(this, half the kernel time) is not trusted
CALIBRATION_SAMPLES = 200  # clean samples per kernel count (60 left the offset varying by +/-0.3 us across workers)
CALIBRATION_BATCH = 34  # the long bracket holds this many tiny kernels (32 more than the short one)
OVERHEAD_CALLS = 20


class Event(Protocol):
    def record(self) -> None: ...

    def elapsed_time(self, end: Any) -> float: ...  # milliseconds, like torch.cuda.Event


class DeviceBackend(Protocol):
    """What device timing needs from a runtime."""

    timer: str  # e.g. "cuda events"
    l2_bytes: int
    l2_source: str

    def event(self) -> Event: ...

    def synchronize(self) -> None: ...

    def sleep(self, cycles: int) -> bool: ...  # enqueue a delay kernel; False when unsupported

    def flush(self) -> None: ...

    def flush_info(self) -> dict[str, Any]: ...

    def telemetry(self) -> dict[str, Any]: ...

    def tiny_kernel(self) -> bool: ...  # enqueue the runtime's smallest kernel; False when it has none


# ----- pure helpers (unit-tested) -------------------------------------------------------
def choose_flush_mode(chosen: str = "") -> str:
    """The L2 flush before cold samples: `chosen` (--dcuopt-l2-flush), else $DCUOPT_L2_FLUSH, else read."""
    mode = (chosen or os.environ.get(FLUSH_ENV, "")).strip().lower() or "read"
    if mode not in FLUSH_MODES:
        raise ValueError(f"L2 flush {mode!r} is not a flush mode; use one of {', '.join(FLUSH_MODES)} "
                         "(read: clean cold L2, the default; write: nvbench-style memset; none: no flush), via "
                         f"--dcuopt-l2-flush or ${FLUSH_ENV}")
    return mode


def flush_bytes_for(l2_bytes: int | None) -> tuple[int, str]:
    """Bytes to stream through before a cold sample, and where the L2 size came from."""
    if l2_bytes and l2_bytes > 0:
        return int(FLUSH_FACTOR * l2_bytes), f"{FLUSH_FACTOR:g} x the device's L2 ({l2_bytes} bytes)"
    return int(FLUSH_FACTOR * FALLBACK_L2_BYTES), (f"L2 size unreadable: fallback {FLUSH_FACTOR:g} x "
                                                    f"{FALLBACK_L2_BYTES // 2**20} MiB")


def rotation_sets(working_set_bytes: int, l2_bytes: int) -> int:
    """How many input sets the hot measurement rotates over (1 = the set is not cache-resident)."""
    if working_set_bytes <= 0 or l2_bytes <= 0 or working_set_bytes >= ROTATION_TARGET * l2_bytes / 2:
        return 1
    wanted = math.ceil(ROTATION_TARGET * l2_bytes / working_set_bytes)
    by_memory = max(1, MAX_ROTATION_BYTES // working_set_bytes)
    return int(max(1, min(wanted, MAX_ROTATION_SETS, by_memory)))


def delay_for(host_seconds: Sequence[float], calls: int = 1, floor_s: float = MIN_DELAY_S) -> float:
    """A delay long enough for the host to queue `calls` launches plus the events behind it."""
    if not host_seconds:
        return floor_s
    ordered = sorted(host_seconds)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return float(min(MAX_DELAY_S, max(floor_s, 2.0 * calls * p90 + 10e-6)))


def hot_batch_for(cold_median_s: float) -> int:
    if cold_median_s <= 0:
        return 1
    return int(max(1, min(MAX_HOT_BATCH, math.ceil(round(HOT_BATCH_TARGET_S / cold_median_s, 6)))))


def late_mask(host_spans: Sequence[float], delay_on_gpu_s: float) -> list[bool]:
    """True where the host took so long to queue start event, launch(es) and end event that the delay
    kernel (which ran `delay_on_gpu_s` on the GPU) may have finished first, letting the GPU idle in the window."""
    limit = delay_on_gpu_s * LATE_MARGIN
    return [span > limit for span in host_spans]


def chunk_size_for(sample_gpu_s: float, target_s: float = 0.02, lo: int = 5, hi: int = 200) -> int:
    if sample_gpu_s <= 0:
        return lo
    return int(max(lo, min(hi, target_s / sample_gpu_s)))


def describe_samples(seconds: Sequence[float], **extra: Any) -> dict[str, Any]:
    """median/IQR/min/n in ms plus the raw samples, for hot and side measurements."""
    if not seconds:
        return {"n": 0, **extra}
    summary = summarize(seconds)
    return {"median_ms": _r(summary.median_ms), "iqr_ms": _r(summary.iqr_ms), "min_ms": _r(summary.min_ms),
            "max_ms": _r(summary.max_ms), "n": summary.rounds, "rel_spread": _r(summary.rel_spread),
            **extra, "samples_ms": [_r(s * 1e3) for s in seconds]}


def _r(value: float) -> float:
    return float(f"{value:.6g}")


# ----- the measurement ------------------------------------------------------------------
@dataclass
class Hiding:
    """The delay kernel that hides host launch latency."""

    supported: bool
    cycles_per_s: float = 0.0
    delay_s: float = 0.0
    expected_gap_s: float = 0.0  # measured duration of the delay on the GPU
    adjustments: int = 0

    def cycles(self, delay_s: float | None = None) -> int:
        return int((self.delay_s if delay_s is None else delay_s) * self.cycles_per_s)

    def to_json(self) -> dict[str, Any]:
        if not self.supported:
            return {"method": "none: the runtime has no delay kernel, so host launch latency is NOT hidden"}
        return {"method": "delay kernel before the start event (torch.cuda._sleep)", "delay_us": _r(self.delay_s * 1e6),
                "measured_delay_us": _r(self.expected_gap_s * 1e6), "cycles_per_us": _r(self.cycles_per_s * 1e-6),
                "doubled": self.adjustments}


@dataclass
class Sampled:
    seconds: list[float]
    reason: str
    late: int = 0
    chunks: int = 0
    clocks_mhz: list[float] = field(default_factory=list)


def measure_device(launches: Sequence[Callable[[], None]], policy: TimingPolicy, backend: DeviceBackend,
                   working_set_bytes: int = 0, clock: Callable[[], float] = time.perf_counter) -> Samples:
    """Time `launches[0]` cold and hot (and rotate over all `launches` for hot when they are several)."""
    launch = launches[0]
    before = backend.telemetry()
    warmup_calls = _warm_up(launch, backend, policy.warmup_s, clock)
    host = host_launch_seconds(launch, backend, clock)
    hiding = _calibrate(backend, host)
    cold = _sample_cold(launch, backend, policy, hiding, clock)
    cold_median = statistics.median(cold.seconds)
    batch = hot_batch_for(cold_median)
    hot_policy = TimingPolicy(warmup_s=0.0, min_samples=policy.min_samples, max_samples=policy.max_samples,
                              target_rel_spread=policy.target_rel_spread, min_time_s=min(policy.min_time_s, 0.05),
                              max_time_s=max(0.05, policy.max_time_s / 4), cold=False)
    hot = _sample_hot([launch], backend, hot_policy, hiding, host, batch, clock)
    offset = event_offset(launch, backend, hiding, cold.seconds, policy, clock)
    raw_cold_median = cold_median
    if offset.applied:
        cold.seconds = [t - offset.seconds for t in cold.seconds]
        hot.seconds = [t - offset.seconds / batch for t in hot.seconds]
        cold_median = statistics.median(cold.seconds)
    extra: dict[str, Any] = {
        "flush": backend.flush_info(),
        "launch_hiding": hiding.to_json(),
        "event_offset": {**offset.to_json(), "raw_event_median_ms": _r(raw_cold_median * 1e3)},
        "stream": "events and kernel on the runtime's current stream (the legacy default stream for a C ABI solve)",
        "late_samples_discarded": cold.late,
        "hot": describe_samples(hot.seconds, batch=batch, stop_reason=hot.reason, late_discarded=hot.late,
                                what="back-to-back calls behind one delay kernel, no flush, the same inputs"),
    }
    sets = len(launches)
    extra["rotation"] = {"working_set_bytes": working_set_bytes, "l2_bytes": backend.l2_bytes, "sets": sets,
                         "covers_bytes": sets * working_set_bytes,
                         "resident": bool(working_set_bytes and working_set_bytes < ROTATION_TARGET * backend.l2_bytes / 2)}
    if sets > 1:
        rotated = _sample_hot(list(launches), backend, hot_policy, hiding, host, batch, clock)
        if offset.applied:
            rotated.seconds = [t - offset.seconds / batch for t in rotated.seconds]
        extra["hot_rotated"] = describe_samples(rotated.seconds, batch=batch, sets=sets, stop_reason=rotated.reason,
                                                what="back-to-back calls over rotating input sets, no flush")
    extra["seed_method"] = seed_method(launch, backend)
    extra["launch_overhead"] = _launch_overhead(launch, backend, host, cold_median)
    extra["samples_ms"] = [_r(s * 1e3) for s in cold.seconds]
    clocks = [c for c in cold.clocks_mhz if c]
    extra["telemetry"] = {"before": before, "after": backend.telemetry(),
                          "sm_clock_mhz_during": ({"min": min(clocks), "median": statistics.median(clocks),
                                                   "max": max(clocks), "reads": len(clocks)} if clocks else None)}
    primary, mode, reason = (cold.seconds, "cold", cold.reason) if policy.cold else (hot.seconds, "hot", hot.reason)
    if not policy.cold:
        extra["cold"] = describe_samples(cold.seconds, stop_reason=cold.reason)
    return Samples(primary, backend.timer, mode, reason, warmup_calls, extra)


def _warm_up(launch: Callable[[], None], backend: DeviceBackend, warmup_s: float, clock: Callable[[], float]) -> int:
    calls, start = 0, clock()
    while calls < 3 or clock() - start < warmup_s:
        backend.flush()
        launch()
        calls += 1
        if calls % 50 == 0:
            backend.synchronize()  # keep the queue short so the time budget means GPU time
    backend.synchronize()
    return calls


def host_launch_seconds(launch: Callable[[], None], backend: DeviceBackend, clock: Callable[[], float],
                        calls: int = OVERHEAD_CALLS) -> list[float]:
    """Host time of one `launch()` (ctypes + driver enqueue + error check), with the GPU held busy."""
    backend.synchronize()
    backend.sleep(int(2e-3 * 1e9))  # ~1 ms+ at any clock: the queue never blocks the host here
    seconds = []
    for _ in range(calls):
        begin = clock()
        launch()
        seconds.append(clock() - begin)
    backend.synchronize()
    return seconds


def _calibrate(backend: DeviceBackend, host: Sequence[float]) -> Hiding:
    """Measure the delay kernel's cycles per second; pick a delay that covers queueing one sample."""
    backend.synchronize()
    probe_cycles = 200_000
    marks = []
    for _ in range(5):
        start, end = backend.event(), backend.event()
        start.record()
        if not backend.sleep(probe_cycles):
            return Hiding(False)
        end.record()
        marks.append((start, end))
    backend.synchronize()
    durations = sorted(s.elapsed_time(e) * 1e-3 for s, e in marks)
    rate = probe_cycles / statistics.median(durations) if durations[0] > 0 else 1e9
    return Hiding(True, cycles_per_s=rate, delay_s=delay_for(host))


def _sample_cold(launch: Callable[[], None], backend: DeviceBackend, policy: TimingPolicy, hiding: Hiding,
                 clock: Callable[[], float]) -> Sampled:
    accepted: list[float] = []
    late_total, chunks, clocks = 0, 0, []
    chunk = 5
    start = clock()
    while True:
        marks, spans = [], []
        for _ in range(chunk):
            backend.flush()
            _bracket(backend, launch, hiding, clock, marks, spans)
        backend.synchronize()
        chunks += 1
        clocks.append(backend.telemetry().get("sm_clock_mhz") or 0.0)
        times, late = _settle(marks, spans, hiding, 1)
        late_total += sum(late)
        accepted, reason = _keep(accepted, times, late, clock() - start, policy)
        if reason:
            return Sampled(accepted, reason, late_total, chunks, clocks)
        per_sample = max(times) + hiding.expected_gap_s
        chunk = chunk_size_for(per_sample + 50e-6)


def _bracket(backend: DeviceBackend, body: Callable[[], None], hiding: Hiding, clock: Callable[[], float],
             marks: list[tuple[Any, Any, Any]], spans: list[float]) -> None:
    """Queue one sample: pre event, delay kernel (hides the host's launch cost), start event, body, end event."""
    pre, begin, end = backend.event(), backend.event(), backend.event()
    pre.record()
    queued = clock()
    if hiding.supported:
        backend.sleep(hiding.cycles())
    begin.record()
    body()
    end.record()
    spans.append(clock() - queued)
    marks.append((pre, begin, end))


def _settle(marks: list[tuple[Any, Any, Any]], spans: list[float], hiding: Hiding,
            batch: int) -> tuple[list[float], list[bool]]:
    """Per-call seconds of a synchronized chunk, and which samples were late (see `_judge`)."""
    gaps = [p.elapsed_time(b) * 1e-3 for p, b, _ in marks]
    times = [b.elapsed_time(e) * 1e-3 / batch for _, b, e in marks]
    return times, _judge(gaps, spans, hiding)


def _keep(accepted: list[float], times: list[float], late: list[bool], elapsed: float,
          policy: TimingPolicy) -> tuple[list[float], str | None]:
    """Add the chunk's on-time samples; the stopping rule, with a hard cap when too few are on time."""
    accepted = accepted + [t for t, is_late in zip(times, late) if not is_late]
    reason = should_stop(accepted, elapsed, policy) if accepted else None
    if reason is None and elapsed >= 2 * policy.max_time_s + 1.0:
        accepted = accepted or times
        reason = f"time cap ({policy.max_time_s:g} s) with too few clean samples; late samples kept"
    return accepted, reason


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


@dataclass
class Offset:
    """The event bracket's own cost, subtracted from every sample when `applied`."""

    applied: bool
    seconds: float = 0.0
    reason: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        if not self.applied:
            return {"applied": False, "reason": self.reason, **self.details}
        return {"applied": True, "offset_us": _r(self.seconds * 1e6), **self.details}


PROFILER_WHAT = ("per-sample event time minus the summed device durations of the solve's kernels, recorded by the "
                 "profiler (CUPTI / roctracer through torch.profiler) on profiled cold samples; its median is "
                 "subtracted from every cold sample (and offset/batch from hot samples)")
CALIBRATED_WHAT = ("the bracket's fixed cost, measured once per device: the cold bracket (flush, delay kernel, start "
                   "event, body, end event) around 1, 2 and `batch` back-to-back copies of the runtime's smallest "
                   "kernel; per_kernel = (T(batch) - T(2)) / (batch - 2) is what one more kernel costs, and "
                   "offset = T(1) - per_kernel is subtracted from every cold sample (offset/batch from hot samples)")


def event_offset(launch: Callable[[], None], backend: DeviceBackend, hiding: Hiding, cold_seconds: Sequence[float],
                 policy: TimingPolicy, clock: Callable[[], float]) -> Offset:
    """The bracket cost to subtract, by the policy's mode (else $DCUOPT_EVENT_OFFSET, else `calibrated`)."""
    mode = choose_offset_mode(policy.event_offset)
    if mode == "none":
        return Offset(False, reason="event offset `none`: raw event times (they include the bracket's cost)")
    cold_median = statistics.median(cold_seconds)
    if mode == "profiler":
        found = _cached_offset(launch, backend, hiding, cold_median)
    else:
        found = _cached_bracket(backend, hiding, clock)
    if found.applied and min(cold_seconds) <= found.seconds:
        return Offset(False, reason=f"the fastest sample ({min(cold_seconds) * 1e6:.2f} us) is not longer than the "
                                    f"bracket's cost ({found.seconds * 1e6:.2f} us); raw event times",
                      details={"method": mode})
    return found


def _cached_bracket(backend: DeviceBackend, hiding: Hiding, clock: Callable[[], float]) -> Offset:
    """calibrate_bracket once per backend (= per device and process): the cost does not depend on the kernel."""
    cache: dict[str, Offset] | None = getattr(backend, "bracket_cache", None)
    if cache is not None and "offset" in cache:
        found = cache["offset"]
        return Offset(found.applied, found.seconds, found.reason, {**found.details, "reused": True})
    offset = calibrate_bracket(backend, hiding, clock)
    if cache is not None:
        cache["offset"] = offset
    return offset


def calibrate_bracket(backend: DeviceBackend, hiding: Hiding, clock: Callable[[], float],
                      samples: int = CALIBRATION_SAMPLES, batch: int = CALIBRATION_BATCH) -> Offset:
    """The event bracket's fixed cost, from brackets around 0, 1, 2 and `batch` tiny kernels (see CALIBRATED_WHAT)."""
    if not hiding.supported:
        return Offset(False, reason="no delay kernel, so the bracket's cost cannot be told apart from the host's "
                                    "launch cost; raw event times")
    tiny = getattr(backend, "tiny_kernel", None)
    if tiny is None or not tiny():
        return Offset(False, reason="this runtime has no tiny kernel to calibrate the bracket with; raw event times")
    host = host_launch_seconds(tiny, backend, clock)
    medians = {count: statistics.median(bracketed_samples(backend, tiny, count, hiding, host, clock, samples))
               for count in (0, 1, 2, batch)}
    per_kernel = (medians[batch] - medians[2]) / (batch - 2)
    offset = medians[1] - per_kernel
    details = {"method": "calibrated", "empty_pair_us": _r(medians[0] * 1e6), "one_kernel_us": _r(medians[1] * 1e6),
               "two_kernels_us": _r(medians[2] * 1e6), "batch_us": _r(medians[batch] * 1e6),
               "per_kernel_us": _r(per_kernel * 1e6), "batch": batch, "samples": samples, "what": CALIBRATED_WHAT}
    if per_kernel <= 0 or not 0 < offset <= OFFSET_LIMIT_S:
        return Offset(False, reason=f"calibration gave per-kernel {per_kernel * 1e6:.2f} us and bracket "
                                    f"{offset * 1e6:.2f} us, outside (0, {OFFSET_LIMIT_S * 1e6:.0f} us]; raw event times",
                      details=details)
    return Offset(True, offset, details=details)


def bracketed_samples(backend: DeviceBackend, tiny: Callable[[], Any], count: int, hiding: Hiding,
                      host: Sequence[float], clock: Callable[[], float], samples: int, rounds: int = 40) -> list[float]:
    """Cold-bracket times around `count` back-to-back tiny kernels (late samples dropped, as in sampling)."""
    delay = Hiding(True, hiding.cycles_per_s, delay_for(host, calls=max(1, count), floor_s=hiding.delay_s))

    def body() -> None:
        for _ in range(count):
            tiny()

    accepted: list[float] = []
    times: list[float] = []
    for _ in range(rounds):
        marks: list[tuple[Any, Any, Any]] = []
        spans: list[float] = []
        for _ in range(20):
            backend.flush()
            _bracket(backend, body, delay, clock, marks, spans)
        backend.synchronize()
        times, late = _settle(marks, spans, delay, 1)
        accepted += [t for t, is_late in zip(times, late) if not is_late]
        if len(accepted) >= samples:
            break
    return accepted or times


def _cached_offset(launch: Callable[[], None], backend: DeviceBackend, hiding: Hiding, cold_median_s: float) -> Offset:
    """calibrate_offset once per bound call (interleaved A/B rounds time the same binding again and again)."""
    cache: dict[int, tuple[Any, Offset]] | None = getattr(backend, "offset_cache", None)
    owner = getattr(launch, "__self__", launch)
    hit = cache.get(id(owner)) if cache is not None else None
    if hit is not None and hit[0]() is owner:  # the same live object, not a recycled id
        found = hit[1]
        return Offset(found.applied, found.seconds, found.reason, {**found.details, "reused": True})
    offset = calibrate_offset(launch, backend, hiding, cold_median_s)
    if cache is not None:
        try:
            cache[id(owner)] = (weakref.ref(owner), offset)
        except TypeError:  # not weak-referenceable: calibrate every time
            pass
    return offset


def choose_offset_mode(chosen: str = "") -> str:
    """The bracket-correction mode: `chosen` (--dcuopt-event-offset), else $DCUOPT_EVENT_OFFSET, else calibrated."""
    mode = (chosen or os.environ.get(OFFSET_ENV, "")).strip().lower() or "calibrated"
    if mode not in OFFSET_MODES:
        raise ValueError(f"event offset {mode!r} is not a mode; use `calibrated` (the default: the bracket's cost "
                         "measured once per device with a tiny kernel), `profiler` (against CUPTI/roctracer kernel "
                         "records) or `none` (raw event times), via --dcuopt-event-offset or ${OFFSET_ENV}")
    return mode


def bracket_offset(event_seconds: Sequence[float], device_seconds: Sequence[float], limit_s: float) -> tuple[float | None, str]:
    """Median of (event - device) per sample, or None with the reason it cannot be trusted."""
    if not event_seconds or len(event_seconds) != len(device_seconds):
        return None, "no paired samples"
    gaps = sorted(e - d for e, d in zip(event_seconds, device_seconds))
    offset = statistics.median(gaps)
    if offset < 0:
        return None, f"the profiler's kernel time exceeds the event time by {-offset * 1e6:.2f} us"
    if offset > limit_s:
        return None, f"offset {offset * 1e6:.2f} us is implausibly large (over {limit_s * 1e6:.1f} us)"
    return offset, ""


def calibrate_offset(launch: Callable[[], None], backend: DeviceBackend, hiding: Hiding, cold_median_s: float,
                     samples: int = OFFSET_SAMPLES) -> Offset:
    """Profile a few cold samples exactly as they are timed; pair each event time with the kernels' own time."""
    profile = getattr(backend, "profile_device", None)
    if profile is None:
        return Offset(False, reason="this runtime has no profiler hook; raw event times (they include the bracket's cost)")
    infra = profile(lambda: (backend.flush(), hiding.supported and backend.sleep(1000)))
    if not infra:
        return Offset(False, reason="the profiler recorded no device activity (CUPTI/roctracer unavailable?); raw "
                                    "event times (they include the bracket's cost)")
    marks: list[tuple[Event, Event]] = []

    def body() -> None:
        for _ in range(samples):
            backend.flush()
            begin, end = backend.event(), backend.event()
            if hiding.supported:
                backend.sleep(hiding.cycles())
            begin.record()
            launch()
            end.record()
            marks.append((begin, end))

    activities = profile(body)
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
                                         "device_median_us": _r(statistics.median(device) * 1e6),
                                         "profiled_event_median_us": _r(statistics.median(events) * 1e6),
                                         "activities_per_call": ours, "kernels": sorted(names)[:8],
                                         "what": PROFILER_WHAT})


def split_activities(activities: Sequence[tuple[str, float]], infra: Sequence[str],
                     samples: int) -> list[list[tuple[str, float]]] | str:
    """The solve's own device activities of each profiled sample, or why they cannot be told apart.

    Each sample queues the flush/delay activities (`infra`, learnt by profiling them alone) and then the
    solve's. First by position (robust when the solve runs the same kernels as the flush); failing that,
    by dropping every activity named like an infra one.
    """
    per_sample, rest = divmod(len(activities), samples)
    if not rest and per_sample > len(infra):
        chunks = [list(activities[i * per_sample:(i + 1) * per_sample]) for i in range(samples)]
        if all([name for name, _ in chunk[:len(infra)]] == list(infra) for chunk in chunks):
            return [chunk[len(infra):] for chunk in chunks]
    ours = [item for item in activities if item[0] not in set(infra)]
    per_sample, rest = divmod(len(ours), samples)
    if rest or per_sample < 1:
        return (f"{len(activities)} device activities for {samples} samples do not split into the flush/delay "
                f"activities ({', '.join(infra)}) and the solve's")
    return [ours[i * per_sample:(i + 1) * per_sample] for i in range(samples)]


def _sample_hot(launches: Sequence[Callable[[], None]], backend: DeviceBackend, policy: TimingPolicy,
                hiding: Hiding, host: Sequence[float], batch: int, clock: Callable[[], float]) -> Sampled:
    delay = Hiding(hiding.supported, hiding.cycles_per_s, delay_for(host, calls=batch, floor_s=hiding.delay_s))
    accepted: list[float] = []
    late_total, start = 0, clock()
    rotation = itertools.cycle(launches)

    def batch_of_calls() -> None:
        for _ in range(batch):
            next(rotation)()

    while True:
        marks, spans = [], []
        for _ in range(5):
            _bracket(backend, batch_of_calls, delay, clock, marks, spans)
        backend.synchronize()
        times, late = _settle(marks, spans, delay, batch)
        late_total += sum(late)
        accepted, reason = _keep(accepted, times, late, clock() - start, policy)
        if reason:
            return Sampled(accepted, reason, late_total)


def seed_method(launch: Callable[[], None], backend: DeviceBackend, warmup: int = SEED_WARMUP,
                repeat: int = SEED_REPEAT) -> dict[str, Any]:
    """The original skill's benchmark: one event pair around `repeat` back-to-back calls, no flush; it
    reported this mean as its average, median, min and max alike."""
    for _ in range(warmup):
        launch()
    backend.synchronize()
    start, end = backend.event(), backend.event()
    start.record()
    for _ in range(repeat):
        launch()
    end.record()
    backend.synchronize()
    mean_ms = start.elapsed_time(end) / repeat
    return {"mean_ms": _r(mean_ms), "warmup": warmup, "repeat": repeat,
            "what": "one event pair around back-to-back calls, no L2 flush (the original benchmark.py)"}


def _launch_overhead(launch: Callable[[], None], backend: DeviceBackend, host: Sequence[float],
                     cold_median_s: float, calls: int = 10) -> dict[str, Any]:
    """Host cost of one call, and how much of it an unhidden single-call event pair would count."""
    unhidden = []
    for _ in range(calls):
        backend.flush()
        backend.synchronize()  # the GPU is idle: the start event fires before the launch arrives
        start, end = backend.event(), backend.event()
        start.record()
        launch()
        end.record()
        backend.synchronize()
        unhidden.append(start.elapsed_time(end) * 1e-3)
    host_sorted = sorted(host)
    unhidden_median = statistics.median(unhidden)
    return {"host_call_us_median": _r(statistics.median(host_sorted) * 1e6),
            "host_call_us_p90": _r(host_sorted[min(len(host_sorted) - 1, int(0.9 * len(host_sorted)))] * 1e6),
            "unhidden_single_call_ms": _r(unhidden_median * 1e3),
            "unhidden_minus_cold_us": _r((unhidden_median - cold_median_s) * 1e6),
            "what": "host_call = ctypes solve() + launch + error check on the host; unhidden = one event pair "
                    "around one call on an idle GPU (flushed), which counts the launch latency the delay kernel hides"}


# ----- the torch.cuda backend (CUDA and ROCm builds of torch) ---------------------------
class TorchBackend:
    """DeviceBackend over `torch.cuda`: events, `_sleep`, and an L2 flush buffer on `device`."""

    def __init__(self, torch: Any, device: Any, flush_mode: str | None = None,
                 telemetry: Callable[[], dict[str, Any]] | None = None) -> None:
        self.torch = torch
        self.device = device
        self.timer = "hip events" if getattr(torch.version, "hip", None) else "cuda events"
        properties = torch.cuda.get_device_properties(device)
        l2 = int(getattr(properties, "L2_cache_size", 0) or 0)
        self.l2_bytes = l2 if l2 > 0 else FALLBACK_L2_BYTES
        self.flush_mode = choose_flush_mode(flush_mode)
        size, self.l2_source = flush_bytes_for(l2)
        self.flush_bytes = size if self.flush_mode != "none" else 0
        self._buffer = torch.empty(max(1, self.flush_bytes // 4), dtype=torch.float32, device=device)
        self._buffer.zero_()
        self._sink = torch.empty((), dtype=torch.float32, device=device)
        self._telemetry = telemetry or dict
        self._has_sleep = callable(getattr(torch.cuda, "_sleep", None))
        self._tiny = torch.zeros(1, dtype=torch.float32, device=device)
        self.offset_cache: dict[int, Any] = {}  # bound call -> Offset (see timing.device._cached_offset)
        self.bracket_cache: dict[str, Any] = {}  # "offset" -> Offset (see timing.device._cached_bracket)

    def event(self) -> Any:
        return self.torch.cuda.Event(enable_timing=True)

    def synchronize(self) -> None:
        self.torch.cuda.synchronize(self.device)

    def sleep(self, cycles: int) -> bool:
        if not self._has_sleep:
            return False
        if cycles > 0:
            self.torch.cuda._sleep(int(cycles))
        return True

    def tiny_kernel(self) -> bool:
        self._tiny.zero_()  # a one-element fill: one block, no memory traffic to speak of
        return True

    def flush(self) -> None:
        if self.flush_mode == "read":
            self.torch.sum(self._buffer, 0, out=self._sink)  # one reduction kernel, reads every byte
        elif self.flush_mode == "write":
            self._buffer.zero_()

    def profile_device(self, body: Callable[[], Any]) -> list[tuple[str, float]] | None:
        """[(name, seconds)] of every device activity `body` queues, in start order (torch.profiler: CUPTI on
        CUDA, roctracer on ROCm), or None when the profiler cannot record device activity here."""
        torch = self.torch
        try:
            from torch.profiler import ProfilerActivity, profile

            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                body()
                self.synchronize()
            events = prof.profiler.kineto_results.events()  # type: ignore[union-attr]
            device = [e for e in events if e.device_type() == torch.autograd.DeviceType.CUDA and e.duration_ns() > 0]
        except Exception:  # noqa: BLE001 - a missing profiler means "no correction", said in the record
            return None
        device.sort(key=lambda e: e.start_ns())
        return [(e.name(), e.duration_ns() * 1e-9) for e in device] or None

    def flush_info(self) -> dict[str, Any]:
        how = {"read": "a sum over the buffer (reads evict the kernel's lines; the L2 is left clean)",
               "write": "a memset of the buffer (nvbench's way; the L2 is left dirty)",
               "none": "no flush: cold samples are NOT cold"}[self.flush_mode]
        return {"mode": self.flush_mode, "bytes": self.flush_bytes, "l2_bytes": self.l2_bytes,
                "size_from": self.l2_source, "how": how, "env": FLUSH_ENV}

    def telemetry(self) -> dict[str, Any]:
        return self._telemetry()
