"""Device timing: the pure rules, and the whole measurement on a simulated GPU stream.

No GPU is needed: `SimGpu` models one in-order stream (an op starts when it has been queued by the
host and the previous op has finished) and a host clock that host-side calls advance. That is
exactly the behaviour the method relies on (launch latency, queueing, events stamped when the
stream reaches them), so the tests check that the harness measures the kernel and not the host.
The real thing is exercised on the H200 (docs/gpu-timing.md, tests/toolchains/test_cuda.py).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from pytest_dcuopt.timing.bracket import Hiding, delay_for, late_mask
from pytest_dcuopt.timing.device import (
    MAX_ROTATION_SETS,
    chunk_size_for,
    hot_batch_for,
    measure_device,
    rotation_sets,
)
from pytest_dcuopt.timing.device_timer import (
    FALLBACK_L2_BYTES,
    Activity,
    DeviceTimer,
    choose_flush_mode,
    flush_bytes_for,
)
from pytest_dcuopt.timing.offset import (
    CALIBRATION_BATCH,
    bracket_offset,
    choose_offset_mode,
    event_offset,
    split_activities,
)
from pytest_dcuopt.timing.policy import TimingPolicy
from pytest_dcuopt.timing.side_figures import describe_samples, seed_method

US = 1e-6


class SimClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def spend(self, seconds: float) -> None:
        self.now += seconds


class SimEvent:
    def __init__(self, gpu: SimGpu) -> None:
        self.gpu = gpu
        self.at: float | None = None

    def record(self) -> None:
        self.gpu.clock.spend(self.gpu.record_cost)
        self.at = self.gpu.run(self.gpu.event_s)  # stamped when the stream reaches it; then occupies event_s
        self.gpu.after_event = True

    def elapsed_time(self, end: SimEvent) -> float:
        assert self.at is not None and end.at is not None
        return (end.at - self.at) * 1e3


class SimGpu(DeviceTimer):
    """One stream. `kernel()` is the C ABI call: host cost, then the kernel is queued.

    Calls that wait for the device, as `solve`s written elsewhere do: `syncs` (cudaDeviceSynchronize after the
    kernel: the host waits until the stream is idle, then pays `sync_cost`), `alloc_s` (cudaMalloc of a temporary
    before the kernel, `alloc_s` of host time, and cudaFree after it, which waits for the device too), `copy_s`
    (a device-to-device cudaMemcpy after the kernel: a device activity the host does not wait for).
    """

    timer = "simulated events"

    def __init__(self, cold_s: float = 10 * US, hot_s: float = 4 * US, launch_cost: float = 8 * US,
                 has_sleep: bool = True, l2_bytes: int = 50 * 2**20, bracket_s: float = 0.0, event_s: float = 0.0,
                 profiler: bool = False, tiny_s: float | None = 1.6 * US, syncs: bool = False, alloc_s: float = 0.0,
                 copy_s: float = 0.0, sync_cost: float = 5 * US) -> None:
        self.clock = SimClock()
        self.syncs, self.alloc_s, self.copy_s, self.sync_cost = syncs, alloc_s, copy_s, sync_cost
        self.kernel_times: Iterator[float] | None = None  # per-call kernel durations (noise), else cold_s/hot_s
        # The bracket's cost, as on a real GPU: each event occupies the stream for event_s, and the first kernel
        # after an event pays bracket_s to launch onto an idle GPU. Both lie inside the events and outside the
        # kernel's own (profiler) record; back-to-back kernels pay neither.
        self.bracket_s, self.event_s, self.after_event = bracket_s, event_s, False
        self.tiny_s = tiny_s
        self.profiler = profiler
        self.recording: list[Activity] | None = None
        self.free_at = 0.0
        self.cold_s, self.hot_s, self.launch_cost = cold_s, hot_s, launch_cost
        self.record_cost, self.flush_s, self.cycles_per_s = 1 * US, 30 * US, 1.5e9
        self.has_sleep = has_sleep
        self.l2_bytes, self.l2_source = l2_bytes, "simulated"
        self.cache_cold = True
        self.calls = 0
        self.stalls: dict[int, float] = {}  # call number -> extra host seconds (a descheduled thread)
        self.flushes_behind_work = 0  # flushes queued while earlier work was still on the stream

    def run(self, duration: float, activity: str | None = None) -> float:
        """Queue an op now; return when it starts on the GPU. Named ops are device activities a profiler sees."""
        start = max(self.free_at, self.clock.now)
        self.free_at = start + duration
        if activity and self.recording is not None:
            self.recording.append(Activity(activity, duration, start))
        return start

    def kernel(self) -> None:
        self.calls += 1
        self.clock.spend(self.launch_cost + self.stalls.get(self.calls, 0.0))
        if self.alloc_s:
            self.clock.spend(self.alloc_s)  # cudaMalloc
        self._launch_latency()
        duration = next(self.kernel_times) if self.kernel_times is not None else None
        self.run(duration or (self.cold_s if self.cache_cold else self.hot_s), "solve_kernel")
        self.cache_cold = False
        if self.copy_s:
            self.clock.spend(3 * US)
            self.run(self.copy_s, "Memcpy DtoD (Device -> Device)")
        if self.syncs or self.alloc_s:  # cudaDeviceSynchronize, or cudaFree: both wait for the device
            self.synchronize()
            self.clock.spend(self.sync_cost)

    def _launch_latency(self) -> None:
        if self.after_event:
            self.run(self.bracket_s)
        self.after_event = False

    def tiny_kernel(self) -> bool:
        if self.tiny_s is None:
            return False
        self.clock.spend(5 * US)
        self._launch_latency()
        self.run(self.tiny_s, "fill_kernel")
        return True

    def profile_activities(self, body: Callable[[], object]) -> list[Activity] | None:
        if not self.profiler:
            return None
        self.recording = []
        body()
        self.synchronize()
        found, self.recording = self.recording, None
        return found

    # DeviceTimer
    def event(self) -> SimEvent:
        return SimEvent(self)

    def synchronize(self) -> None:
        self.clock.now = max(self.clock.now, self.free_at)

    def sleep(self, cycles: int) -> bool:
        if not self.has_sleep:
            return False
        self.clock.spend(3 * US)
        self.after_event = False
        self.run(cycles / self.cycles_per_s, "spin_kernel")
        return True

    def flush(self) -> None:
        self.flushes_behind_work += self.free_at > self.clock.now
        self.clock.spend(2 * US)
        self.after_event = False
        self.run(self.flush_s, "reduce_kernel")
        self.cache_cold = True

    def flush_info(self) -> dict[str, Any]:
        return {"mode": "read", "bytes": 2 * self.l2_bytes}

    def telemetry(self) -> dict[str, Any]:
        return {"sm_clock_mhz": 1980.0}


POLICY = TimingPolicy(warmup_s=0.005, min_samples=10, max_time_s=0.05, min_time_s=0.01, target_rel_spread=0.01)


def test_cold_samples_measure_the_kernel_not_the_launch() -> None:
    gpu = SimGpu()
    samples = measure_device([gpu.kernel], POLICY, gpu, clock=gpu.clock)
    assert samples.mode == "cold" and samples.timer == "simulated events"
    assert min(samples.seconds) == pytest.approx(10 * US, rel=1e-6)
    assert max(samples.seconds) == pytest.approx(10 * US, rel=1e-6)
    assert len(samples.seconds) >= POLICY.min_samples
    assert samples.stop_reason.startswith("noise target")
    assert samples.extra["late_samples_discarded"] == 0
    assert samples.extra["launch_hiding"]["method"].startswith("delay kernel")
    # The hot number is the cached, back-to-back time, measured separately and never mixed in.
    hot = samples.extra["hot"]
    assert hot["median_ms"] == pytest.approx(4e-3, rel=1e-6) and hot["batch"] == math.ceil(100 / 10)
    assert len(hot["samples_ms"]) == hot["n"]


PROFILER = TimingPolicy(**{**POLICY.to_json(), "event_offset": "profiler"})
RAW = TimingPolicy(**{**POLICY.to_json(), "event_offset": "none"})


def test_the_bracket_cost_is_calibrated_with_a_tiny_kernel_and_removed() -> None:
    gpu = SimGpu(bracket_s=0.7 * US, event_s=1.3 * US)
    samples = measure_device([gpu.kernel], POLICY, gpu, clock=gpu.clock)
    offset = samples.extra["event_offset"]
    assert offset["applied"] and offset["method"] == "calibrated"
    assert offset["offset_us"] == pytest.approx(2.0) and offset["per_kernel_us"] == pytest.approx(1.6)
    assert offset["empty_pair_us"] == pytest.approx(1.3)  # the events alone: not the whole cost
    assert offset["one_kernel_us"] == pytest.approx(3.6) and offset["batch"] == CALIBRATION_BATCH
    assert offset["raw_event_median_ms"] == pytest.approx(0.012)
    assert statistics_median(samples.seconds) == pytest.approx(10 * US, rel=1e-6)
    assert samples.extra["hot"]["median_ms"] == pytest.approx(4e-3, rel=1e-6)  # offset/batch off each hot call


def test_raw_event_times_count_the_bracket() -> None:
    gpu = SimGpu(bracket_s=0.7 * US, event_s=1.3 * US)
    samples = measure_device([gpu.kernel], RAW, gpu, clock=gpu.clock)
    assert samples.extra["event_offset"]["applied"] is False and "`none`" in samples.extra["event_offset"]["reason"]
    assert statistics_median(samples.seconds) == pytest.approx(12 * US, rel=1e-6)


def test_the_calibration_runs_once_per_device_timer() -> None:
    gpu = SimGpu(bracket_s=0.7 * US, event_s=1.3 * US)
    gpu.bracket_cache = {}
    first = measure_device([gpu.kernel], POLICY, gpu, clock=gpu.clock).extra["event_offset"]
    other_kernel = measure_device([lambda: gpu.kernel()], POLICY, gpu, clock=gpu.clock).extra["event_offset"]
    assert "reused" not in first and other_kernel["reused"] is True and other_kernel["offset_us"] == first["offset_us"]


def test_without_a_tiny_kernel_or_a_delay_kernel_raw_times_stay_and_it_says_so() -> None:
    gpu = SimGpu(bracket_s=2 * US, tiny_s=None)
    samples = measure_device([gpu.kernel], POLICY, gpu, clock=gpu.clock)
    assert samples.extra["event_offset"]["applied"] is False
    assert "no tiny kernel" in samples.extra["event_offset"]["reason"]
    assert statistics_median(samples.seconds) == pytest.approx(12 * US, rel=1e-6)
    no_sleep = SimGpu(bracket_s=2 * US, has_sleep=False)
    reason = measure_device([no_sleep.kernel], POLICY, no_sleep, clock=no_sleep.clock).extra["event_offset"]["reason"]
    assert "no delay kernel" in reason


def test_the_profiler_mode_pairs_samples_with_kernel_records() -> None:
    gpu = SimGpu(bracket_s=0.7 * US, event_s=1.3 * US, profiler=True)
    samples = measure_device([gpu.kernel], PROFILER, gpu, clock=gpu.clock)
    offset = samples.extra["event_offset"]
    assert offset["applied"] and offset["method"] == "profiler" and offset["offset_us"] == pytest.approx(2.0)
    assert offset["raw_event_median_ms"] == pytest.approx(0.012) and offset["device_median_us"] == pytest.approx(10.0)
    assert statistics_median(samples.seconds) == pytest.approx(10 * US, rel=1e-6)
    assert samples.extra["hot"]["batch"] == 9  # sized from the raw 12 us cold median
    assert samples.extra["hot"]["median_ms"] == pytest.approx(4e-3, rel=1e-6)


def test_the_profiler_offset_is_measured_once_per_bound_call() -> None:
    gpu = SimGpu(bracket_s=2 * US, profiler=True)
    gpu.offset_cache = {}
    first = measure_device([gpu.kernel], PROFILER, gpu, clock=gpu.clock).extra["event_offset"]
    again = measure_device([gpu.kernel], PROFILER, gpu, clock=gpu.clock).extra["event_offset"]
    assert "reused" not in first and again["reused"] is True and again["offset_us"] == first["offset_us"]


def test_without_a_profiler_the_profiler_mode_keeps_raw_times_and_says_so() -> None:
    gpu = SimGpu(bracket_s=2 * US)
    samples = measure_device([gpu.kernel], PROFILER, gpu, clock=gpu.clock)
    assert samples.extra["event_offset"]["applied"] is False
    assert "the profiler recorded no device activity" in samples.extra["event_offset"]["reason"]
    assert statistics_median(samples.seconds) == pytest.approx(12 * US, rel=1e-6)


def test_bracket_offset_rules() -> None:
    assert bracket_offset([12 * US] * 3, [10 * US] * 3, 10 * US)[0] == pytest.approx(2 * US)
    assert bracket_offset([10 * US], [12 * US], 10 * US)[1].startswith("the profiler's kernel time exceeds")
    assert "implausibly large" in bracket_offset([50 * US], [10 * US], 10 * US)[1]


def test_offset_and_flush_modes_option_then_env_then_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DCUOPT_EVENT_OFFSET", raising=False)
    assert choose_offset_mode() == "calibrated"
    monkeypatch.setenv("DCUOPT_EVENT_OFFSET", "none")
    assert choose_offset_mode() == "none" and choose_offset_mode("profiler") == "profiler"
    gpu = SimGpu(bracket_s=2 * US)
    assert measure_device([gpu.kernel], POLICY, gpu, clock=gpu.clock).extra["event_offset"]["applied"] is False
    with pytest.raises(ValueError, match=r"'sometimes' is not a mode.*--dcuopt-event-offset"):
        choose_offset_mode("sometimes")
    monkeypatch.delenv("DCUOPT_L2_FLUSH", raising=False)
    assert choose_flush_mode() == "read"
    monkeypatch.setenv("DCUOPT_L2_FLUSH", "write")
    assert choose_flush_mode() == "write" and choose_flush_mode("none") == "none"
    monkeypatch.setenv("DCUOPT_L2_FLUSH", "sometimes")
    with pytest.raises(ValueError, match=r"not a flush mode; use one of read, write, none.*--dcuopt-l2-flush"):
        choose_flush_mode()


def test_launch_overhead_is_measured_and_would_dominate_unhidden() -> None:
    gpu = SimGpu()
    overhead = measure_device([gpu.kernel], POLICY, gpu, clock=gpu.clock).extra["launch_overhead"]
    assert overhead["host_call_us_median"] == pytest.approx(8.0)
    assert overhead["unhidden_single_call_ms"] == pytest.approx(0.018)  # 8 us launch + 10 us kernel
    assert overhead["unhidden_minus_cold_us"] == pytest.approx(8.0)


def test_the_seed_method_reports_host_throughput_for_short_kernels() -> None:
    gpu = SimGpu()
    seed = seed_method(gpu.kernel, gpu)
    # 20 back-to-back calls of a 4 us (cached) kernel behind an 8 us host call: the loop is host-bound.
    assert seed["mean_ms"] == pytest.approx((20 * 8 + 4 - 1) * 1e-3 / 20, rel=0.05)
    assert seed["repeat"] == 20 and seed["warmup"] == 10


def test_a_stalled_host_sample_is_discarded() -> None:
    gpu = SimGpu()
    gpu.stalls = {call: 500 * US for call in range(0, 100_000, 37)}  # every 37th call stalls 0.5 ms
    samples = measure_device([gpu.kernel], POLICY, gpu, clock=gpu.clock)
    assert samples.extra["late_samples_discarded"] > 0
    assert max(samples.seconds) == pytest.approx(10 * US, rel=1e-6)  # no stalled sample survived


def test_without_a_delay_kernel_it_says_so() -> None:
    gpu = SimGpu(has_sleep=False)
    samples = measure_device([gpu.kernel], POLICY, gpu, clock=gpu.clock)
    assert "NOT hidden" in samples.extra["launch_hiding"]["method"]
    # The flush before each sample still keeps the GPU busy while the host queues the call.
    assert statistics_median(samples.seconds) == pytest.approx(10 * US, rel=1e-6)


def test_hot_mode_policy_and_rotation() -> None:
    gpu = SimGpu()
    sets = [gpu.kernel, gpu.kernel, gpu.kernel]
    samples = measure_device(sets, TimingPolicy(**{**POLICY.to_json(), "cold": False}), gpu,
                             working_set_bytes=12 * 2**20, clock=gpu.clock)
    assert samples.mode == "hot"
    assert statistics_median(samples.seconds) == pytest.approx(4 * US, rel=1e-6)
    assert samples.extra["cold"]["median_ms"] == pytest.approx(0.010, rel=1e-6)
    assert samples.extra["rotation"] == {"working_set_bytes": 12 * 2**20, "l2_bytes": gpu.l2_bytes, "sets": 3,
                                         "covers_bytes": 36 * 2**20, "resident": True}
    assert samples.extra["hot_rotated"]["sets"] == 3


def test_time_cap_stops_a_noisy_kernel() -> None:
    gpu = SimGpu()
    durations = iter([(1 + (i % 7) * 0.3) * 10 * US for i in range(1_000_000)])

    def noisy() -> None:
        gpu.cold_s = next(durations)
        gpu.kernel()

    samples = measure_device([noisy], TimingPolicy(warmup_s=0.001, min_samples=10, max_time_s=0.02,
                                                   target_rel_spread=0.0001), gpu, clock=gpu.clock)
    assert samples.stop_reason.startswith("time cap")


def statistics_median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


# ----- pure rules -------------------------------------------------------------------------
def test_flush_size_from_l2_with_fallback() -> None:
    assert flush_bytes_for(60 * 2**20) == (120 * 2**20, "2 x the device's L2 (62914560 bytes)")
    size, where = flush_bytes_for(None)
    assert size == 2 * FALLBACK_L2_BYTES == 256 * 2**20 and "fallback" in where
    assert flush_bytes_for(0)[0] == 256 * 2**20


def test_rotation_sets() -> None:
    l2 = 60 * 2**20
    assert rotation_sets(400 * 2**20, l2) == 1  # far beyond the L2: one set is already cold
    assert rotation_sets(12 * 2**20, l2) == 15  # 15 x 12 MB >= 3 x 60 MB
    assert rotation_sets(1024, l2) == MAX_ROTATION_SETS
    assert rotation_sets(0, l2) == 1


def test_delay_batch_chunk_and_late_rules() -> None:
    assert delay_for([]) == pytest.approx(20 * US)
    assert delay_for([8 * US] * 10) == pytest.approx(26 * US)  # 2 x p90 + 10 us
    assert delay_for([8 * US] * 10, calls=10) == pytest.approx(170 * US)
    assert delay_for([1.0]) == 5e-3  # capped
    assert hot_batch_for(10 * US) == 10 and hot_batch_for(1e-3) == 1 and hot_batch_for(1e-9) == 64
    assert chunk_size_for(50 * US) == 200 and chunk_size_for(1e-3) == 20 and chunk_size_for(1.0) == 5
    assert late_mask([10 * US, 30 * US], 26 * US) == [False, True]


def test_describe_samples_keeps_raw_values() -> None:
    described = describe_samples([1e-3, 2e-3, 3e-3], batch=4)
    assert described["median_ms"] == 2.0 and described["min_ms"] == 1.0 and described["n"] == 3
    assert described["samples_ms"] == [1.0, 2.0, 3.0] and described["batch"] == 4
    assert describe_samples([]) == {"n": 0}


def test_split_activities() -> None:
    infra = ["reduce", "spin"]
    sample = [("reduce", 1.0), ("spin", 2.0), ("k1", 3.0), ("k2", 4.0)]
    assert split_activities(sample * 2, infra, 2) == [[("k1", 3.0), ("k2", 4.0)]] * 2
    # A solve that runs the flush's own kernel is still separated, by position.
    torch_sum = [("reduce", 1.0), ("spin", 2.0), ("reduce", 5.0)]
    assert split_activities(torch_sum * 3, infra, 3) == [[("reduce", 5.0)]] * 3
    # An extra activity breaks the positions; dropping infra names still separates the solve's kernels.
    assert split_activities(sample * 2 + [("spin", 2.0)], infra, 2) == [[("k1", 3.0), ("k2", 4.0)]] * 2
    assert str(split_activities([("reduce", 1.0), ("spin", 2.0)] * 2, infra, 2)).startswith("4 device activities")


def test_no_correction_for_samples_no_longer_than_the_bracket() -> None:
    gpu = SimGpu(bracket_s=0.7 * US, event_s=1.3 * US)
    hiding = Hiding(True, gpu.cycles_per_s, 50 * US)
    found = event_offset(gpu.kernel, gpu, hiding, [1.5 * US, 3 * US], POLICY, gpu.clock)
    assert found.applied is False and "not longer than the bracket's cost (2.00 us)" in found.reason
    assert event_offset(gpu.kernel, gpu, hiding, [2.5 * US, 3 * US], POLICY, gpu.clock).applied


class PreparedKernel:
    """A launch with the worker's `TimedCalls` hooks: `prepare` queues the inputs' rotation on the stream (a 50 us
    device copy), `finish` takes a snapshot (it waits for the device)."""

    def __init__(self, gpu: SimGpu) -> None:
        self.gpu, self.prepared, self.finished, self.events = gpu, 0, 0, []

    def __call__(self) -> None:
        self.events.append("call")
        self.gpu.kernel()

    def prepare(self) -> None:
        self.prepared += 1
        self.events.append("prepare")
        self.gpu.clock.spend(5 * US)
        self.gpu.run(50 * US, "Memcpy DtoD (Device -> Device)")

    def finish(self) -> None:
        self.finished += 1
        self.events.append("finish")
        self.gpu.synchronize()


def test_every_warm_up_call_and_cold_sample_is_prepared_outside_its_bracket() -> None:
    gpu = SimGpu()
    kernel = PreparedKernel(gpu)
    samples = measure_device([kernel], POLICY, gpu, clock=gpu.clock)
    # The rotation's 50 us copy is queued before each sample's flush and events: the samples are the kernel's 10 us.
    assert min(samples.seconds) == pytest.approx(10 * US, rel=1e-6)
    assert max(samples.seconds) == pytest.approx(10 * US, rel=1e-6)
    assert samples.warmup_calls >= 4
    assert kernel.prepared == kernel.finished >= samples.warmup_calls + len(samples.seconds)
    warm_up = kernel.events[:3 * samples.warmup_calls]
    assert warm_up == ["prepare", "call", "finish"] * samples.warmup_calls
    at = [i for i, event in enumerate(kernel.events) if event == "prepare"]
    assert all(kernel.events[i + 1:i + 3] == ["call", "finish"] for i in at)  # each prepared call is one call
