"""Synchronizing and allocating `solve`s: detection, the sync method, and the quality verdict, on `SimGpu`.

`SimGpu` (test_device_timing.py) models one in-order stream and a host clock; here its calls also wait for
the device the way `solve`s written elsewhere do (cudaDeviceSynchronize, cudaMalloc + cudaFree), or queue a
device-to-device copy the host does not wait for. The real thing runs on the H200 through
tools/device/sync_check.sh (the tests/data/cases/sync_solve branches, 5 fresh processes, against ncu).
"""
from __future__ import annotations

import random
import statistics
from collections.abc import Callable
from typing import Any

import pytest

from pytest_dcuopt.timing.bracket import calibrate_hiding
from pytest_dcuopt.timing.device import measure_device
from pytest_dcuopt.timing.device_timer import Activity
from pytest_dcuopt.timing.policy import METHOD_ENV, TOO_FEW, TimingPolicy, choose_method
from pytest_dcuopt.timing.sync import DETECT_MIN_DELAY_S, detect_sync, split_at_markers
from pytest_dcuopt.timing.sync_hooks import MarkedCall, marked_seconds
from tests.unit.test_device_timing import US, SimEvent, SimGpu

POLICY = TimingPolicy(warmup_s=0.005, min_samples=10, max_time_s=0.05, min_time_s=0.01, target_rel_spread=0.01)
ASYNC = TimingPolicy(**{**POLICY.to_json(), "timing_method": "async"})
SYNC = TimingPolicy(**{**POLICY.to_json(), "timing_method": "sync"})
KERNEL_S = 100 * US


def detect(gpu: SimGpu) -> dict[str, Any]:
    return detect_sync(gpu.kernel, gpu, calibrate_hiding(gpu, []), gpu.clock).to_json()


# ----- detection --------------------------------------------------------------------------------
def test_detection_says_async_for_a_normal_kernel() -> None:
    found = detect(SimGpu(cold_s=KERNEL_S, profiler=True))
    assert found["verdict"] == "async" and found["idle_after_call"] is False
    assert found["host_call_us"] == pytest.approx(8.0)  # the launch alone: the call did not wait for the delay
    assert found["delay_us"] == pytest.approx(DETECT_MIN_DELAY_S / US)
    assert found["wait_after_call_us"] > 0.9 * found["delay_us"]  # the delay was still running after the call


@pytest.mark.parametrize("waits", [{"syncs": True}, {"alloc_s": 200 * US}], ids=["device_sync", "malloc_free"])
def test_detection_says_sync_for_a_call_that_waits_for_the_device(waits: dict[str, Any]) -> None:
    found = detect(SimGpu(cold_s=KERNEL_S, **waits))
    assert found["verdict"] == "sync" and found["idle_after_call"] is True
    assert found["host_call_us"] >= found["delay_us"]  # it returned only after the delay and its kernel had run
    assert found["wait_after_call_us"] < 10  # nothing was left on the stream


def test_a_slow_host_call_that_does_not_wait_is_async() -> None:
    gpu = SimGpu(cold_s=KERNEL_S, launch_cost=3000 * US)  # 3 ms of host work in the call, no synchronize
    found = detect(gpu)
    assert found["verdict"] == "async" and found["delay_us"] >= 4 * 3000  # the delay grows with the unhidden call


def test_a_device_to_device_copy_does_not_make_the_call_sync() -> None:
    """cudaMemcpy device-to-device does not block the host (CUDA's API sync behaviour): launch hiding still works,
    and the copy is inside the event bracket."""
    gpu = SimGpu(cold_s=KERNEL_S, copy_s=50 * US)
    samples = measure_device([gpu.kernel], POLICY, gpu, clock=gpu.clock)
    assert samples.extra["method"] == "async" and samples.extra["sync_detected"]["verdict"] == "async"
    assert statistics.median(samples.seconds) == pytest.approx(150 * US, rel=1e-6)


def test_without_a_delay_kernel_detection_is_undetermined_and_says_why() -> None:
    gpu = SimGpu(cold_s=KERNEL_S, has_sleep=False)
    samples = measure_device([gpu.kernel], POLICY, gpu, clock=gpu.clock)
    assert samples.extra["method"] == "async"
    assert samples.extra["sync_detected"]["verdict"] == "undetermined"
    assert "no delay kernel" in samples.extra["sync_detected"]["reason"]


# ----- the sync method --------------------------------------------------------------------------
@pytest.mark.parametrize("waits", [{"syncs": True}, {"alloc_s": 200 * US}], ids=["device_sync", "malloc_free"])
def test_a_waiting_call_is_timed_by_the_sync_method_at_the_kernel_time(waits: dict[str, Any]) -> None:
    gpu = SimGpu(cold_s=KERNEL_S, profiler=True, **waits)
    samples = measure_device([gpu.kernel], POLICY, gpu, clock=gpu.clock)
    extra = samples.extra
    assert extra["method"] == "sync" and extra["method_reason"].startswith("auto: the call waited")
    assert extra["quality"] == "ok" and extra["late_samples_discarded"] == 0
    assert samples.stop_reason.startswith("noise target") and len(samples.seconds) >= POLICY.min_samples
    assert statistics.median(samples.seconds) == pytest.approx(KERNEL_S, rel=0.01)
    sync = extra["sync"]
    assert sync["primary"] == "kernels" and sync["degraded"] is None and samples.timer.startswith("device activity")
    assert sync["kernels"]["median_ms"] == pytest.approx(0.1, rel=1e-6)
    assert sync["device_span"]["median_ms"] == pytest.approx(0.1, rel=1e-6)  # one kernel: its span is its duration
    assert sync["activities_per_call"] == [1] and sync["activity_names"] == ["solve_kernel"]
    assert sync["profiler_sessions"] == 1  # a session costs far more than sampling: the first chunk is enough here
    # The host-side figures count what the kernel time leaves out: the launch, the allocation, the synchronize.
    host_extra_us = 8 + 5 + waits.get("alloc_s", 0) / US
    assert sync["host_call"]["median_ms"] * 1e3 == pytest.approx(100 + host_extra_us, abs=0.5)
    assert sync["host_wall"]["median_ms"] > sync["host_call"]["median_ms"]
    assert sync["event_span"]["median_ms"] > 0.1 + 8e-3  # the launch onto an idle GPU is inside the events
    assert extra["hot"]["n"] == 0 and "exec_tag::sync" in extra["hot"]["skipped"]
    assert extra["event_offset"]["applied"] is False and "method sync" in extra["event_offset"]["reason"]


def test_the_sync_method_separates_copies_and_sums_several_kernels() -> None:
    gpu = SimGpu(cold_s=KERNEL_S, copy_s=40 * US, syncs=True, profiler=True)
    sync = measure_device([gpu.kernel], POLICY, gpu, clock=gpu.clock).extra["sync"]
    assert sync["kernels"]["median_ms"] == pytest.approx(0.14, rel=1e-6)  # the copy is the call's device work too
    assert sync["kernels_only"]["median_ms"] == pytest.approx(0.1, rel=1e-6)  # what ncu's kernel time sums
    assert sync["device_span"]["median_ms"] == pytest.approx(0.14, rel=1e-6)  # the copy was queued behind the kernel
    assert sync["activities_per_call"] == [2]


def test_repeated_measurements_of_a_synchronizing_call_agree() -> None:
    """Five measurements, each its own simulated GPU with kernel-time noise (+-3%) and host stalls: the medians agree
    within 2% (the bound the check asks of it; the async method gave medians 75% apart on such calls)."""
    medians = []
    for seed in range(5):
        gpu = SimGpu(cold_s=KERNEL_S, profiler=True, syncs=True)
        rng = random.Random(seed)
        gpu.kernel_times = iter([rng.gauss(KERNEL_S, 0.03 * KERNEL_S) for _ in range(1_000_000)])
        gpu.stalls = {call: rng.uniform(0, 2000) * US for call in range(0, 100_000, 7)}
        samples = measure_device([gpu.kernel], POLICY, gpu, clock=gpu.clock)
        assert samples.extra["method"] == "sync" and samples.extra["quality"] == "ok"
        medians.append(statistics.median(samples.seconds))
    assert max(medians) / min(medians) <= 1.02
    assert statistics.median(medians) == pytest.approx(KERNEL_S, rel=0.01)


def test_without_a_profiler_the_sync_method_reports_the_event_span_and_says_so() -> None:
    gpu = SimGpu(cold_s=KERNEL_S, syncs=True)
    samples = measure_device([gpu.kernel], POLICY, gpu, clock=gpu.clock)
    sync = samples.extra["sync"]
    assert samples.extra["method"] == "sync" and sync["primary"] == "event_span"
    assert "no profiler activity records" in sync["degraded"] and "not the kernels' own time" in sync["degraded"]
    assert samples.timer == "simulated events" and "kernels" not in sync and "device_span" not in sync
    # launch latency (8 us) + kernel + the synchronize inside the call (5 us) + the end event's record
    assert statistics.median(samples.seconds) == pytest.approx(KERNEL_S + 14 * US, rel=0.01)


def test_a_profiler_that_fails_while_sampling_degrades_to_the_event_span_and_says_so() -> None:
    """The first session (the flush/marker names) works; the next one fails before running its samples."""
    gpu = SimGpu(cold_s=KERNEL_S, syncs=True, profiler=True)
    def failing(body: Callable[[], object]) -> list[Activity] | None:
        return None

    sessions = iter([gpu.profile_activities, failing])
    gpu.profile_activities = lambda body: next(sessions)(body)  # type: ignore[method-assign]
    gpu.profiler_problem = "CUPTI_ERROR_NOT_INITIALIZED"
    samples = measure_device([gpu.kernel], POLICY, gpu, clock=gpu.clock)
    sync = samples.extra["sync"]
    assert sync["primary"] == "event_span" and samples.extra["quality"] == "ok"
    assert sync["degraded"] == "the profiler failed in session 1: CUPTI_ERROR_NOT_INITIALIZED"
    assert "kernels" not in sync and sync["event_span"]["n"] == len(samples.seconds)


def test_the_method_can_be_forced_either_way(monkeypatch: pytest.MonkeyPatch) -> None:
    normal = SimGpu(cold_s=KERNEL_S, profiler=True)
    forced = measure_device([normal.kernel], SYNC, normal, clock=normal.clock)
    assert forced.extra["method"] == "sync" and forced.extra["method_reason"].startswith("sync: chosen")
    assert forced.extra["sync_detected"]["verdict"] == "async"
    assert statistics.median(forced.seconds) == pytest.approx(KERNEL_S, rel=1e-6)
    monkeypatch.setenv(METHOD_ENV, "async")
    assert choose_method() == "async" and choose_method("sync") == "sync"
    monkeypatch.setenv(METHOD_ENV, "sometimes")
    with pytest.raises(ValueError, match=r"'sometimes' is not a method.*DCUOPT_TIMING_METHOD"):
        choose_method()


def test_hot_policy_times_the_sync_call_without_a_flush() -> None:
    gpu = SimGpu(cold_s=KERNEL_S, hot_s=60 * US, syncs=True, profiler=True)
    samples = measure_device([gpu.kernel], TimingPolicy(**{**POLICY.to_json(), "cold": False}), gpu, clock=gpu.clock)
    assert samples.mode == "hot" and statistics.median(samples.seconds) == pytest.approx(60 * US, rel=1e-6)
    assert samples.extra["cold"]["n"] == 0 and samples.extra["flush"]["mode"] == "none"


# ----- quality ----------------------------------------------------------------------------------
def test_the_async_method_on_a_synchronizing_call_is_flagged_too_few_clean_samples() -> None:
    """Forced to hide launches behind a delay kernel, every sample of a waiting call is late."""
    gpu = SimGpu(cold_s=KERNEL_S, syncs=True, profiler=True)
    samples = measure_device([gpu.kernel], ASYNC, gpu, clock=gpu.clock)
    assert samples.extra["method"] == "async" and samples.extra["sync_detected"]["verdict"] == "sync"
    assert samples.extra["late_samples_discarded"] > 0 and samples.stop_reason.startswith("time cap")
    assert samples.extra["quality"] == TOO_FEW and samples.extra["clean_samples"] < POLICY.min_samples
    assert "fewer than min_samples (10)" in samples.extra["quality_detail"]


def test_quality_is_ok_with_enough_clean_samples() -> None:
    gpu = SimGpu(cold_s=KERNEL_S)
    samples = measure_device([gpu.kernel], POLICY, gpu, clock=gpu.clock)
    assert samples.extra["quality"] == "ok" and samples.extra["clean_samples"] == len(samples.seconds)
    assert "quality_detail" not in samples.extra


def test_a_sync_call_too_slow_for_the_time_cap_is_flagged() -> None:
    gpu = SimGpu(cold_s=20_000 * US, syncs=True, profiler=True)  # 20 ms kernels, 50 ms cap: a handful of samples
    samples = measure_device([gpu.kernel], POLICY, gpu, clock=gpu.clock)
    assert samples.extra["method"] == "sync" and samples.stop_reason.startswith("time cap")
    assert 3 <= len(samples.seconds) < POLICY.min_samples and samples.extra["quality"] == TOO_FEW
    assert samples.extra["sync"]["quality"] == TOO_FEW


# ----- splitting the profiler's records per call ------------------------------------------------
def _a(name: str, start: float = 0.0, seconds: float = 1.0) -> Activity:
    return Activity(name, seconds, start)


def test_split_at_markers_allows_a_varying_number_of_activities_per_call() -> None:
    infra = ["reduce", "spin"]
    records = [_a("reduce"), _a("spin"), _a("k1"), _a("reduce"), _a("spin"), _a("k1"), _a("k2"), _a("Memcpy DtoD")]
    assert split_at_markers(records, infra, 2) == [[_a("k1")], [_a("k1"), _a("k2"), _a("Memcpy DtoD")]]
    too_many = split_at_markers(records, infra, 3)
    assert too_many == "2 flush/marker sequences (reduce, spin) in the profiler's records for 3 samples"
    assert "came before the first sample" in str(split_at_markers([_a("k1"), *records], infra, 2))
    empty = split_at_markers([_a("reduce"), _a("spin"), _a("reduce"), _a("spin"), _a("k1")], infra, 2)
    assert empty == "1 of 2 calls queued no device activity the profiler saw (first: sample 0)"
    # No flush and no marker: equal shares, as the profiler offset splits them.
    assert split_at_markers([_a("k1"), _a("k1")], [], 2) == [[_a("k1")], [_a("k1")]]


# ----- the marked method: the library's sync hooks ------------------------------------------------
class SimMarks:
    """cuda_shim.cu's sync hooks on `SimGpu`: S0 at begin, an E event right before each wait the call makes, a spin
    kernel and an S event after it, the last E at end (the C code's parity rules)."""

    def __init__(self, gpu: SimGpu) -> None:
        self.gpu = gpu
        self.armed, self.lead_cycles, self.events, self.waits = False, 0, [], 0
        self.begin_at, self.first_wait = 0.0, -1.0

    def begin(self, lead_cycles: int) -> bool:
        self.armed, self.lead_cycles, self.events, self.waits = True, lead_cycles, [], 0
        self.begin_at, self.first_wait = self.gpu.clock(), -1.0
        self._record()
        return True

    def _record(self) -> None:
        event = SimEvent(self.gpu)
        event.record()
        self.events.append(event)

    def before_wait(self) -> None:
        if self.armed and len(self.events) % 2 == 1:
            if self.first_wait < 0:
                self.first_wait = self.gpu.clock() - self.begin_at
            self.waits += 1
            self._record()

    def after_wait(self) -> None:
        if self.armed and len(self.events) % 2 == 0:
            self.gpu.sleep(self.lead_cycles)
            self._record()

    def end(self) -> None:
        if self.armed and len(self.events) % 2 == 1:
            self._record()
        self.armed = False

    def read(self) -> MarkedCall | None:
        pairs = zip(self.events[0::2], self.events[1::2], strict=True)
        return MarkedCall([s.elapsed_time(e) * 1e-3 for s, e in pairs], self.waits, self.first_wait)


class HookedGpu(SimGpu):
    """A SimGpu whose waiting calls go through `SimMarks` (a `.cu` solve built with the hooks)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.marks = SimMarks(self)

    def synchronize(self) -> None:  # only the call's own waits are hooked: the harness's are not inside a call
        super().synchronize()

    def kernel(self) -> None:
        inner_sync = SimGpu.synchronize

        def hooked_sync() -> None:
            self.marks.before_wait()
            inner_sync(self)
            self.marks.after_wait()

        self.synchronize = hooked_sync  # type: ignore[method-assign]
        try:
            super().kernel()
        finally:
            del self.synchronize


@pytest.mark.parametrize("waits", [{"syncs": True}, {"alloc_s": 200 * US}], ids=["device_sync", "malloc_free"])
def test_the_sync_hooks_time_a_waiting_call_at_the_kernel_time_without_a_profiler(waits: dict[str, Any]) -> None:
    """The launch latency onto an idle GPU (bracket_s) and the host's wake-up after the wait are outside the marked
    figure: the events are queued behind a delay, and E is recorded before the call waits."""
    gpu = HookedGpu(cold_s=KERNEL_S, bracket_s=2 * US, profiler=False, **waits)
    samples = measure_device([gpu.kernel], POLICY, gpu, clock=gpu.clock, sync_marks=gpu.marks)
    sync = samples.extra["sync"]
    assert samples.extra["method"] == "sync" and sync["primary"] == "kernels_marked"
    assert sync["hooks"].startswith("used")
    assert samples.timer == "simulated events (sync hooks)"
    assert statistics.median(samples.seconds) == pytest.approx(KERNEL_S, rel=1e-3)
    assert sync["profiler_figures"]["primary"] == "event_span"  # side figures on: the unhooked method ran too


def test_without_hooks_the_profiler_is_the_primary_figure_and_the_record_says_why() -> None:
    gpu = SimGpu(cold_s=KERNEL_S, profiler=True, syncs=True)
    samples = measure_device([gpu.kernel], POLICY, gpu, clock=gpu.clock)
    assert samples.extra["sync"]["primary"] == "kernels"
    assert samples.extra["sync"]["hooks"].startswith("none: the kernel library has no sync hooks")


def test_hooks_that_see_no_wait_fall_back_to_the_profiler_and_say_so() -> None:
    """A call that waits through a path the hooks do not cover (here: the plain SimGpu wait) is not timed by them."""
    gpu = SimGpu(cold_s=KERNEL_S, profiler=True, syncs=True)
    samples = measure_device([gpu.kernel], POLICY, gpu, clock=gpu.clock, sync_marks=SimMarks(gpu))
    assert samples.extra["sync"]["primary"] == "kernels"
    assert "not through a call the sync hooks cover" in samples.extra["sync"]["hooks"]
    assert statistics.median(samples.seconds) == pytest.approx(KERNEL_S, rel=1e-3)


def test_a_call_that_reaches_its_wait_after_the_delay_ended_is_discarded_and_the_delay_grows() -> None:
    """300 us of host work before the kernel (a large cudaMalloc): the first samples are late, the delay doubles
    until it covers the host work, and the kept samples are the kernel's time."""
    gpu = HookedGpu(cold_s=KERNEL_S, alloc_s=300 * US)
    samples = measure_device([gpu.kernel], SYNC, gpu, clock=gpu.clock, sync_marks=gpu.marks)
    assert "late samples discarded" in samples.stop_reason
    assert statistics.median(samples.seconds) == pytest.approx(KERNEL_S, rel=1e-3)


def test_marked_seconds_drops_an_empty_last_segment_and_subtracts_the_bracket() -> None:
    assert marked_seconds([102e-6, 1.2e-6], 2e-6) == pytest.approx(100e-6)  # the tail after the wait was empty
    assert marked_seconds([52e-6, 52e-6], 2e-6) == pytest.approx(100e-6)  # two kernels, each behind its own wait
    assert marked_seconds([1e-6], 2e-6) == 0.0  # never negative
