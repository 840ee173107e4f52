"""Device work outside a sample's timed window (timing/outside_window.py), judged from profiler records: on the
simulated GPU of tests/unit/test_device_timing.py (one stream, activities with start times), with the cheats that
put their work where the events do not look beside honest calls that look like them."""
from __future__ import annotations

from pytest_dcuopt.timing.bracket import Hiding
from pytest_dcuopt.timing.device import measure_device
from pytest_dcuopt.timing.device_timer import Activity
from pytest_dcuopt.timing.outside_window import WORK_OUTSIDE_WINDOW, judge_windows, work_outside_window
from tests.unit.test_device_timing import POLICY, US, SimGpu

HIDING = Hiding(True, 1.5e9, 50 * US)


def side_activity(gpu: SimGpu, seconds: float, start: float) -> None:
    """A kernel on a stream of the call's own (not the simulated one): the profiler records it, the events do not."""
    if gpu.recording is not None:
        gpu.recording.append(Activity("side_kernel", seconds, start))


def test_a_plain_kernel_runs_inside_its_windows() -> None:
    gpu = SimGpu(profiler=True)
    found = work_outside_window(gpu.kernel, gpu, HIDING, gpu.clock)
    assert found.verdict == "inside" and len(found.windows_s) == 5 and max(found.outside_s) == 0.0


def test_work_on_a_stream_that_runs_during_the_delay_kernel_is_outside() -> None:
    gpu = SimGpu(profiler=True)

    def during_delay() -> None:  # launched while the delay kernel holds the timed stream; nothing on that stream
        gpu.clock.spend(3 * US)
        side_activity(gpu, 10 * US, gpu.clock.now)

    found = work_outside_window(during_delay, gpu, HIDING, gpu.clock)
    assert found.verdict == WORK_OUTSIDE_WINDOW and min(found.outside_s) > 9 * US
    assert found.outside[0][0] == "side_kernel"


def test_work_left_after_the_end_event_is_outside() -> None:
    gpu = SimGpu(profiler=True, cold_s=1 * US)

    def leaves_work() -> None:  # a tiny kernel on the timed stream, the real work after the end event
        gpu.kernel()
        side_activity(gpu, 3 * US, gpu.free_at + 2 * US)

    assert work_outside_window(leaves_work, gpu, HIDING, gpu.clock).verdict == WORK_OUTSIDE_WINDOW


def test_two_streams_joined_inside_the_bracket_are_inside() -> None:
    gpu = SimGpu(profiler=True)

    def joined() -> None:  # a second stream that waits for the timed one and is joined before the end event
        start = max(gpu.free_at, gpu.clock.now + gpu.launch_cost)
        side_activity(gpu, 6 * US, start)
        gpu.kernel()

    assert work_outside_window(joined, gpu, HIDING, gpu.clock).verdict == "inside"


def test_a_cheat_named_like_the_flush_kernel_is_not_taken_for_the_flush() -> None:
    spin, flush = "spin_kernel", ["reduce_kernel"]
    activities = [Activity("reduce_kernel", 30 * US, 0.0), Activity("spin_kernel", 50 * US, 31 * US),
                  Activity("reduce_kernel", 10 * US, 40 * US),  # during the delay: the call's, not the harness's
                  Activity("solve_kernel", 1 * US, 82 * US)]
    found = judge_windows(activities, [2 * US], flush, spin)
    assert found.verdict == WORK_OUTSIDE_WINDOW and found.outside == [("reduce_kernel", 10 * US)]


def test_no_profiler_or_no_delay_kernel_is_said() -> None:
    gpu = SimGpu()
    assert work_outside_window(gpu.kernel, gpu, HIDING, gpu.clock).verdict.startswith("not checked: no profiler")
    found = work_outside_window(gpu.kernel, gpu, Hiding(False), gpu.clock)
    assert found.verdict.startswith("not checked: the runtime has no delay kernel")


def test_the_measurement_records_the_verdict() -> None:
    gpu = SimGpu(profiler=True)
    samples = measure_device([gpu.kernel], POLICY, gpu, clock=gpu.clock)
    assert samples.extra["outside_window"]["verdict"] == "inside"
