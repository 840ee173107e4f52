"""Device timing on the simulated stream (tests/unit/test_device_timing.py SimGpu).

* side figures (hot, hot-rotated, the original method, the launch overhead) are opt-in: without them they are
  recorded as absent with the reason, and the primary samples are the same;
* calibrations once per device: the first worker's event-bracket cost and delay-kernel rate are handed to later
  workers on the device (`timing.calibration`), which then calibrate nothing, under --dcuopt-event-offset's
  semantics (`calibrated` takes the handed-over cost, `profiler` and `none` do not).
"""
from __future__ import annotations

import statistics
from dataclasses import replace
from typing import Any

import pytest

from pytest_dcuopt.timing.calibration import CalibrationStore, DeviceCalibration, export_calibration, seed_device_timer
from pytest_dcuopt.timing.device import measure_device
from pytest_dcuopt.timing.side_figures import SIDE_FIGURES_OFF
from tests.unit.test_device_timing import POLICY, US, SimGpu

NO_SIDES = replace(POLICY, side_figures=False)
PROBE_CYCLES = 200_000  # timing.bracket.calibrate_hiding's probe


class CountingGpu(SimGpu):
    """A SimGpu with per-process caches, as TorchDeviceTimer has, counting the calibration work it is asked to do."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.bracket_cache, self.hiding_cache, self.offset_cache = {}, {}, {}
        self.tiny_calls = 0
        self.rate_probes = 0

    def tiny_kernel(self) -> bool:
        self.tiny_calls += 1
        return super().tiny_kernel()

    def sleep(self, cycles: int) -> bool:
        self.rate_probes += cycles == PROBE_CYCLES
        return super().sleep(cycles)


def bracketed_gpu(**kwargs: Any) -> CountingGpu:
    return CountingGpu(bracket_s=0.7 * US, event_s=1.3 * US, **kwargs)


# ----- side figures --------------------------------------------------------------------------------------------------
def test_without_side_figures_only_the_cold_samples_are_taken_and_the_rest_says_why() -> None:
    with_sides, without = SimGpu(), SimGpu()
    full = measure_device([with_sides.kernel, with_sides.kernel], POLICY, with_sides, working_set_bytes=2**20,
                          clock=with_sides.clock)
    light = measure_device([without.kernel], NO_SIDES, without, working_set_bytes=2**20, clock=without.clock)
    for name in ("hot", "hot_rotated", "seed_method", "launch_overhead"):
        assert light.extra[name]["skipped"] == SIDE_FIGURES_OFF and "--dcuopt-side-figures" in SIDE_FIGURES_OFF
        assert "skipped" not in full.extra[name]
    assert light.extra["hot"]["n"] == 0 and full.extra["hot"]["n"] > 0
    # The primary figure is the same measurement either way ...
    assert statistics.median(light.seconds) == pytest.approx(statistics.median(full.seconds), rel=1e-6)
    assert light.mode == "cold" and light.extra["quality"] == "ok"
    # ... taken with far fewer kernel calls (hot batches, the original method's 30 calls, the overhead's 30).
    assert without.calls < with_sides.calls / 2, (without.calls, with_sides.calls)


def test_hot_samples_stay_when_they_are_the_primary_figure() -> None:
    gpu = SimGpu()
    samples = measure_device([gpu.kernel], replace(NO_SIDES, cold=False), gpu, clock=gpu.clock)
    assert samples.mode == "hot" and statistics.median(samples.seconds) == pytest.approx(4 * US, rel=1e-6)
    assert samples.extra["hot"]["n"] > 0 and samples.extra["seed_method"]["skipped"] == SIDE_FIGURES_OFF


def test_a_synchronizing_solve_skips_the_original_method_without_side_figures() -> None:
    gpu = SimGpu(syncs=True)
    samples = measure_device([gpu.kernel], NO_SIDES, gpu, clock=gpu.clock)
    assert samples.extra["method"] == "sync" and samples.extra["seed_method"]["skipped"] == SIDE_FIGURES_OFF
    synced = SimGpu(syncs=True)
    assert "mean_ms" in measure_device([synced.kernel], POLICY, synced, clock=synced.clock).extra["seed_method"]


# ----- calibrations once per device ----------------------------------------------------------------------------------
def test_the_first_worker_calibrates_and_later_workers_on_the_device_take_it_over() -> None:
    store = CalibrationStore()
    first = bracketed_gpu()
    measured = measure_device([first.kernel], NO_SIDES, first, clock=first.clock).extra
    assert first.tiny_calls > 100 and first.rate_probes == 5  # the bracket's calibration and the delay's rate
    store.keep("gpu 0", export_calibration(first, "Sim H200", "read"))
    assert len(store) == 1

    later = bracketed_gpu()
    offered = store.get("gpu 0")
    assert offered is not None
    note = seed_device_timer(later, offered, "Sim H200", "read")
    assert note["accepted"] and note["taken"] == ["delay kernel rate", "event bracket cost"]
    timed = measure_device([later.kernel], NO_SIDES, later, clock=later.clock).extra
    assert later.tiny_calls == 0 and later.rate_probes == 0  # it calibrated nothing
    offset = timed["event_offset"]
    assert offset["applied"] and offset["handed_over"] and offset["reused"]
    assert offset["offset_us"] == measured["event_offset"]["offset_us"] == pytest.approx(2.0)
    assert offset["measured_by"] == measured["event_offset"]["measured_by"]
    assert timed["launch_hiding"]["cycles_per_us_from"].startswith("handed over from the first worker")
    assert measured["launch_hiding"]["cycles_per_us_from"] == "measured"
    assert statistics.median(timed["samples_ms"]) == pytest.approx(0.010, rel=1e-6)  # still the kernel's own 10 us


def test_a_worker_keeps_its_own_calibration_and_reuses_it_for_its_next_measurement() -> None:
    gpu = bracketed_gpu()
    measure_device([gpu.kernel], NO_SIDES, gpu, clock=gpu.clock)
    calls = gpu.tiny_calls
    again = measure_device([gpu.kernel], NO_SIDES, gpu, clock=gpu.clock).extra
    assert gpu.tiny_calls == calls and gpu.rate_probes == 5
    assert again["launch_hiding"]["cycles_per_us_from"].startswith("reused (measured by pid")
    offered = DeviceCalibration("Sim H200", "read", 1.0, "pid 1", None)
    assert seed_device_timer(gpu, offered, "Sim H200", "read")["taken"] == []  # what it measured itself stays


def test_a_calibration_from_another_device_or_flush_is_refused_and_measured_afresh() -> None:
    first = bracketed_gpu()
    measure_device([first.kernel], NO_SIDES, first, clock=first.clock)
    calibration = export_calibration(first, "Sim H200", "read")
    assert calibration is not None
    other = bracketed_gpu()
    refused = seed_device_timer(other, calibration, "Sim A100", "read")
    assert refused["accepted"] is False and "'Sim H200'" in refused["reason"] and "measured afresh" in refused["reason"]
    assert seed_device_timer(other, calibration, "Sim H200", "write")["accepted"] is False
    measure_device([other.kernel], NO_SIDES, other, clock=other.clock)
    assert other.tiny_calls > 100 and other.rate_probes == 5


@pytest.mark.parametrize("mode", ["profiler", "none"])
def test_the_event_offset_mode_still_decides_what_is_subtracted(mode: str) -> None:
    first = bracketed_gpu(profiler=True)
    measure_device([first.kernel], NO_SIDES, first, clock=first.clock)
    calibration = export_calibration(first, "Sim H200", "read")
    assert calibration is not None and calibration.bracket is not None
    later = bracketed_gpu(profiler=True)
    seed_device_timer(later, calibration, "Sim H200", "read")
    offset = measure_device([later.kernel], replace(NO_SIDES, event_offset=mode), later,
                            clock=later.clock).extra["event_offset"]
    assert "handed_over" not in offset
    if mode == "profiler":  # paired with this kernel's own profiler records, as before
        assert offset["applied"] and offset["method"] == "profiler" and offset["device_median_us"] == pytest.approx(10)
    else:
        assert offset["applied"] is False and "`none`" in offset["reason"]


def test_a_device_timer_without_caches_exports_nothing() -> None:
    gpu = SimGpu()  # no caches: calibrates on every measurement, as a runtime without them did
    measure_device([gpu.kernel], NO_SIDES, gpu, clock=gpu.clock)
    assert export_calibration(gpu, "Sim", "read") is None
    store = CalibrationStore()
    store.keep("gpu 0", None)
    assert store.get("gpu 0") is None and len(store) == 0
