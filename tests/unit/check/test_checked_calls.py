"""The pytest process judges a timing reply (`check_timed_calls`) from what it computes itself: a reply that leaves a
checked call out, files one under other inputs, or sends no outputs, is not believed."""
from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from pytest_dcuopt.bench.run import bind_spec, measure, plan_for
from pytest_dcuopt.case.model import Branch, load_case
from pytest_dcuopt.check.checked_calls import TIMING_REPLY_CHECK, check_timed_calls
from pytest_dcuopt.errors import TimedCallsWrong
from pytest_dcuopt.report.records import BranchRecord
from pytest_dcuopt.run.devices import LOCK_DIR_ENV
from pytest_dcuopt.timing.policy import TimingPolicy
from pytest_dcuopt.toolchains import make_toolchain
from pytest_dcuopt.toolchains.cache import BuildCache
from pytest_dcuopt.variant import BuildSettings, Variant, Verdicts, resolve
from tests.conftest import CASES

QUICK = TimingPolicy(warmup_s=0.01, min_samples=3, min_time_s=0.0, max_time_s=0.05, side_figures=False)


@pytest.fixture(scope="module")
def timed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Variant, dict[str, Any]]]:
    folder = tmp_path_factory.mktemp("timed")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(LOCK_DIR_ENV, str(folder / "locks"))
        case = load_case(CASES / "judged_calls")
        source = case.root / "kernel.cpp"
        variant = Variant(case.for_toolchain("cpu"), make_toolchain("cpu"), Branch("baseline", source),
                          BranchRecord(case.name, "cpu", "baseline", str(source)))
        resolve(variant, BuildSettings(BuildCache(folder / "cache"), None, (), folder / "logs", 60.0))
        assert variant.worker is not None, variant.setup_error
        try:
            yield variant, measure(variant, TIMING_REPLY_CHECK, QUICK, 30)
        finally:
            variant.worker.close()


def judged(variant: Variant, reply: dict[str, Any]) -> int:
    spec = bind_spec(variant)
    variant.record.correct, variant.verdicts, variant.record.error = True, Verdicts(), None
    return check_timed_calls(variant, spec, plan_for(QUICK, spec, "timing"), reply)


def test_an_honest_reply_holds_every_call_its_plan_asked_for(timed: tuple[Variant, dict[str, Any]]) -> None:
    variant, reply = timed
    kinds = [check["inputs"][0] for check in reply["checks"]]
    assert kinds[0] == "start" and "timed" in kinds and "new" in kinds and kinds[-1] == "set"
    assert judged(variant, copy.deepcopy(reply)) == len(reply["checks"])


def test_a_reply_that_leaves_out_a_timed_call_is_not_believed(timed: tuple[Variant, dict[str, Any]]) -> None:
    variant, reply = timed
    forged = copy.deepcopy(reply)
    forged["checks"] = [check for check in forged["checks"] if check["inputs"][0] != "timed"]
    with pytest.raises(TimedCallsWrong, match="left out the checked call"):
        judged(variant, forged)
    assert variant.record.correct is False


def test_a_timed_call_filed_under_the_starting_inputs_is_compared_with_those(
        timed: tuple[Variant, dict[str, Any]]) -> None:
    variant, reply = timed
    forged = copy.deepcopy(reply)
    for check in forged["checks"]:
        if check["inputs"][0] == "timed":
            check["inputs"] = ("start",)  # its outputs are for rotated inputs: wrong for the starting ones
    with pytest.raises(TimedCallsWrong, match="values differ"):
        judged(variant, forged)


def test_a_checked_call_without_outputs_is_wrong(timed: tuple[Variant, dict[str, Any]]) -> None:
    variant, reply = timed
    forged = copy.deepcopy(reply)
    forged["checks"][0]["snapshot"].outputs = {}
    with pytest.raises(TimedCallsWrong, match="sent no output 'y' back"):
        judged(variant, forged)


def test_an_a_b_round_before_the_last_needs_only_its_timed_call(timed: tuple[Variant, dict[str, Any]]) -> None:
    variant, reply = timed
    spec = bind_spec(variant)
    plan = plan_for(QUICK, spec, "timing", announced=False)
    assert len(plan.checked) == 1 and not plan.announced
    only_timed = copy.deepcopy(reply)
    only_timed["checks"] = [check for check in only_timed["checks"] if check["inputs"] == ("timed", plan.checked[0])]
    assert check_timed_calls(variant, spec, plan, only_timed) == 1
    with pytest.raises(TimedCallsWrong, match="left out the checked call"):
        judged(variant, copy.deepcopy(only_timed))  # the branch's own timing asks for the announced calls too
