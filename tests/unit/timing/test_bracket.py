"""Cold brackets start on an idle GPU: each sample's flush is queued only after the previous sample has ended, in
the samples that are timed and in the calibration whose cost is subtracted from them (on a simulated stream)."""
from __future__ import annotations

from pytest_dcuopt.timing.bracket import Hiding, queue_cold_sample, settle
from pytest_dcuopt.timing.device import _sample_cold
from pytest_dcuopt.timing.offset import calibrate_bracket
from tests.unit.test_device_timing import POLICY, US, SimGpu


def test_cold_samples_are_each_queued_on_an_idle_gpu() -> None:
    gpu = SimGpu()
    hiding = Hiding(True, cycles_per_s=gpu.cycles_per_s, delay_s=40 * US)
    sampled = _sample_cold(gpu.kernel, gpu, POLICY, hiding, gpu.clock)
    assert len(sampled.seconds) >= POLICY.min_samples
    assert gpu.flushes_behind_work == 0


def test_the_calibration_brackets_are_each_queued_on_an_idle_gpu() -> None:
    gpu = SimGpu(bracket_s=0.7 * US, event_s=1.3 * US)
    hiding = Hiding(True, cycles_per_s=gpu.cycles_per_s, delay_s=40 * US)
    offset = calibrate_bracket(gpu, hiding, gpu.clock, samples=20)
    assert offset.applied
    assert gpu.flushes_behind_work == 0


def test_queue_cold_sample_waits_for_the_previous_sample() -> None:
    gpu = SimGpu()
    hiding = Hiding(True, cycles_per_s=gpu.cycles_per_s, delay_s=40 * US)
    marks: list = []
    spans: list[float] = []
    gpu.run(500 * US)  # earlier work still on the stream
    queue_cold_sample(gpu, gpu.kernel, hiding, gpu.clock, marks, spans)
    gpu.synchronize()
    times, late = settle(marks, spans, hiding, 1)
    assert gpu.flushes_behind_work == 0 and late == [False]
    assert times[0] > 0
