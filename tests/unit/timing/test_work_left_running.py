"""Work left running on another stream after the end event: detected, and the branch never crowned.

This machine has no GPU, so the GPU is simulated: `tests/unit/test_device_timing.SimGpu` (one in-order stream, events
stamped when the stream reaches them, a host clock that host-side calls advance), extended here with what the check
relies on: a second stream that the events do not see, events that can be waited on one by one
(torch.cuda.Event.synchronize) and a device-wide synchronize that waits for both streams. The simulation stands in
for the H200 only; the real thing runs in tools/device/reliability_check.sh on the fixture case
tests/data/cases/other_stream.
"""
from __future__ import annotations

from dataclasses import replace

import pytest

from pytest_dcuopt.case.model import Branch, load_case
from pytest_dcuopt.check.checked_calls import reject_work_left_running
from pytest_dcuopt.errors import TimedCallsWrong
from pytest_dcuopt.report.records import BranchRecord
from pytest_dcuopt.report.state import rank_branches
from pytest_dcuopt.timing.bracket import (
    LEFTOVER_FLOOR_S,
    WORK_LEFT_RUNNING,
    leftover_verdict,
    work_left_after_end_event,
)
from pytest_dcuopt.timing.device import measure_device
from pytest_dcuopt.timing.policy import summarize
from pytest_dcuopt.toolchains import make_toolchain
from pytest_dcuopt.variant import Variant
from tests.conftest import CASES
from tests.unit.test_device_timing import POLICY, US, SimEvent, SimGpu

MS = 1e-3


class WaitableEvent(SimEvent):
    def synchronize(self) -> None:
        """Wait (on the host) for this event alone: until the timed stream has reached it."""
        assert self.at is not None
        self.gpu.clock.now = max(self.gpu.clock.now, self.at)


class TwoStreamGpu(SimGpu):
    """SimGpu plus a side stream: `side_s` of each call's work goes there (a solve that launches on a non-blocking
    stream of its own and returns), `own_s` on the timed stream."""

    def __init__(self, own_s: float, side_s: float, waitable: bool = True) -> None:
        super().__init__(cold_s=own_s, hot_s=own_s, sync_cost=5 * US)
        self.side_s, self.side_free_at, self.waitable = side_s, 0.0, waitable

    def kernel(self) -> None:
        if self.cold_s:
            super().kernel()
        else:
            self.clock.spend(self.launch_cost)
        if self.side_s:
            start = max(self.side_free_at, self.clock.now)
            self.side_free_at = start + self.side_s

    def event(self) -> SimEvent:
        return WaitableEvent(self) if self.waitable else SimEvent(self)

    def synchronize(self) -> None:  # cudaDeviceSynchronize: every stream, then its own cost
        self.clock.now = max(self.clock.now, self.free_at, self.side_free_at) + self.sync_cost


def check(gpu: TwoStreamGpu) -> str:
    return work_left_after_end_event(gpu.kernel, gpu, gpu.clock).verdict


def test_a_call_that_leaves_its_kernel_on_another_stream_is_caught() -> None:
    assert check(TwoStreamGpu(own_s=0.0, side_s=2 * MS)) == WORK_LEFT_RUNNING
    found = work_left_after_end_event((gpu := TwoStreamGpu(0.0, 2 * MS)).kernel, gpu, gpu.clock)
    assert all(wait >= 1.9 * MS for wait in found.waits_s) and all(wait < 50 * US for wait in found.idle_s)


@pytest.mark.parametrize(("own_s", "side_s"), [(2 * MS, 0.0), (10 * US, 0.0), (0.0, LEFTOVER_FLOOR_S / 5)])
def test_work_that_ends_before_the_end_event_or_too_short_to_tell_is_idle(own_s: float, side_s: float) -> None:
    """A kernel on the timed stream (long or short) is over when its end event is; leftover work shorter than the
    floor cannot be told from host noise and is not called out (a documented limit)."""
    assert check(TwoStreamGpu(own_s, side_s)) == "idle"


def test_a_runtime_whose_events_cannot_be_waited_on_says_not_checked() -> None:
    assert check(TwoStreamGpu(0.0, 2 * MS, waitable=False)).startswith("not checked:")


def test_the_device_timing_records_the_verdict_in_both_methods() -> None:
    leaves = measure_device([(gpu := TwoStreamGpu(0.0, 2 * MS)).kernel], POLICY, gpu, clock=gpu.clock)
    assert leaves.extra["after_end_event"]["verdict"] == WORK_LEFT_RUNNING
    honest = measure_device([(gpu := TwoStreamGpu(20 * US, 0.0)).kernel], POLICY, gpu, clock=gpu.clock)
    assert honest.extra["after_end_event"]["verdict"] == "idle"
    synced = TwoStreamGpu(20 * US, 0.0)
    synced.syncs = True  # a solve that waits for the device is timed by the sync method: checked there too
    forced = replace(POLICY, timing_method="sync")
    assert measure_device([synced.kernel], forced, synced, clock=synced.clock).extra["after_end_event"]["verdict"] \
        == "idle"


def variant_of(branch: str, median_ms: float) -> Variant:
    case = load_case(CASES / "lazy_output").for_toolchain("cpu")
    source = case.root / "kernel.cpp"
    record = BranchRecord(case.name, "cpu", branch, str(source), correct=True)
    record.timing = summarize([median_ms * 1e-3] * 5).to_json()
    return Variant(case, make_toolchain("cpu"), Branch(branch, source), record)


def test_the_verdict_fails_the_branch_and_it_is_never_champion() -> None:
    """The cheat's samples are 100x faster than the baseline's: it must still not be crowned."""
    baseline, cheat = variant_of("baseline", 1.0), variant_of("leaves_work", 0.01)
    gpu = TwoStreamGpu(0.0, 2 * MS)
    extra = {"after_end_event": work_left_after_end_event(gpu.kernel, gpu, gpu.clock).to_json()}
    reject_work_left_running(baseline, {"after_end_event": {"verdict": "idle"}})  # nothing to say: no raise
    with pytest.raises(TimedCallsWrong, match="work left running after its calls returned"):
        reject_work_left_running(cheat, extra)
    assert cheat.record.correct is False and cheat.record.error is not None
    assert cheat.record.error["kind"] == WORK_LEFT_RUNNING and cheat.record.error["after_end_event"]["waits_us"]
    assert rank_branches([baseline.record, cheat.record])["champion"] == "baseline"


def test_short_leftover_work_is_caught_from_the_median_of_many_calls() -> None:
    """60 us left on another stream after every call: each single wait is within host noise of an idle one on a real
    machine, but the median over the calls is not."""
    found = work_left_after_end_event((gpu := TwoStreamGpu(0.0, 60 * US)).kernel, gpu, gpu.clock)
    assert found.verdict == WORK_LEFT_RUNNING and len(found.waits_s) >= 20


def test_a_short_solve_that_leaves_more_work_than_it_times_is_caught() -> None:
    """16 us left behind a call whose events time its launch only (9 us here): the wait (20 us) is not over the
    floor, but what it adds to an idle wait is more than the call's own event time."""
    found = work_left_after_end_event((gpu := TwoStreamGpu(0.0, 16 * US)).kernel, gpu, gpu.clock)
    assert found.verdict == WORK_LEFT_RUNNING and found.events_s


@pytest.mark.parametrize(("waits_us", "idle_us", "events_us", "verdict"), [
    ([9, 10, 19, 8], [8, 11, 9, 10], [2, 2, 2, 2], "idle"),  # the H200's blocking-stream solve and its idle waits
    ([18, 20, 19, 21], [8, 11, 9, 10], [2, 2, 2, 2], WORK_LEFT_RUNNING),  # 10 us beyond idle, 2 us between events
    ([18, 20, 19, 21], [8, 11, 9, 10], [15, 15, 15, 15], "idle"),  # a long kernel's sync jitter
    ([2000, 2010, 1996, 2022], [8, 11, 9, 10], [2, 2, 2, 2], WORK_LEFT_RUNNING),
])
def test_leftover_rules_on_fixed_waits(waits_us: list[float], idle_us: list[float], events_us: list[float],
                                       verdict: str) -> None:
    assert leftover_verdict([w * US for w in waits_us], [w * US for w in idle_us], [w * US for w in events_us]) \
        == verdict
