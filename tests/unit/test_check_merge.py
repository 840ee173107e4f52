"""BranchRecord.merge: how the xdist controller folds the workers' views of one branch together."""
from __future__ import annotations

import copy
import itertools
import json
from functools import reduce

import pytest

from pytest_dcuopt.report.records import BranchRecord
from pytest_dcuopt.report.state import rank_branches

FAILURE = {"dims": {"N": 3}, "seed": 5, "message": "wrong at 2", "reproduce": "python -m pytest x"}
TIMING = {"median_ms": 1.0, "iqr_ms": 0.1, "min_ms": 0.9, "max_ms": 1.2, "mean_ms": 1.0, "ci95_ms": [0.95, 1.05],
          "rounds": 9, "rel_spread": 0.1, "mode": "hot", "timer": "host perf_counter_ns"}


def record(**fields: object) -> BranchRecord:
    return BranchRecord("case", "cpu", "b", "b.cpp", **fields)  # type: ignore[arg-type]


def through_json(found: BranchRecord) -> BranchRecord:
    """What the controller receives: the worker's record after a JSON round trip."""
    return BranchRecord.from_json(json.loads(json.dumps(found.to_json())))


def merged(*views: BranchRecord) -> BranchRecord:
    def fold(into: BranchRecord, other: BranchRecord) -> BranchRecord:
        into.merge(through_json(other))
        return into

    return reduce(fold, [copy.deepcopy(v) for v in views[1:]], copy.deepcopy(views[0]))


# The views of one branch that three processes can have: the correctness test failed in one worker,
# the benchmark ran (checked only the default dims) in another, the controller ran nothing.
CORRECTNESS_WORKER = record(correct=False, examples=30, examples_run=[{"N": 1000}, {"N": 2000}], failure=FAILURE,
                            error={"kind": "kernel crashed", "message": "SIGSEGV"},
                            observations={"profiler": "ncu"})
BENCHMARK_WORKER = record(examples=1, build={"toolchain": "cpu", "command": "g++ -O3"}, timing=TIMING,
                          throughput={"gbps": 2.0}, device={"name": "cpu"}, observations={"ci_job": "7"},
                          isa={"outcome": "pass", "family": "x86", "arch": None, "verdicts": []})
CONTROLLER = record()


@pytest.mark.parametrize("order", list(itertools.permutations([CORRECTNESS_WORKER, BENCHMARK_WORKER, CONTROLLER])),
                         ids=lambda order: "+".join(str(v.examples) for v in order))
def test_every_merge_order_keeps_the_failure_and_every_field(order: tuple[BranchRecord, ...]) -> None:
    result = merged(*order)
    assert result.correct is False  # not dropped: False == 0 once made it look unset
    assert result.failure == FAILURE
    assert result.error == {"kind": "kernel crashed", "message": "SIGSEGV"}
    assert result.timing == TIMING and result.build == {"toolchain": "cpu", "command": "g++ -O3"}
    assert result.isa is not None and result.isa["outcome"] == "pass"
    assert result.examples == 31  # summed: each process counts only the calls it made
    assert result.examples_run == [{"N": 1000}, {"N": 2000}]
    assert result.throughput == {"gbps": 2.0} and result.device == {"name": "cpu"}
    assert result.observations == {"profiler": "ncu", "ci_job": "7"}


@pytest.mark.parametrize(("first", "second", "expected"), [
    (False, True, False), (True, False, False), (False, None, False), (None, False, False),
    (True, None, True), (None, True, True), (None, None, None), (False, False, False), (True, True, True),
])
def test_a_false_verdict_from_either_side_wins(first: bool | None, second: bool | None,
                                               expected: bool | None) -> None:
    assert merged(record(correct=first), record(correct=second)).correct is expected


def test_the_merged_failing_branch_is_never_champion_even_with_a_timing() -> None:
    """Under xdist the benchmark of a branch may run (and time it) in a worker that never saw it fail."""
    failing = merged(CONTROLLER, BENCHMARK_WORKER, CORRECTNESS_WORKER)
    fast = dict(TIMING, median_ms=0.1, min_ms=0.09, max_ms=0.11, mean_ms=0.1, ci95_ms=[0.095, 0.105])
    failing.timing = fast
    baseline = BranchRecord("case", "cpu", "baseline", "kernel.cpp", correct=True, timing=TIMING)
    assert rank_branches([baseline, failing])["champion"] == "baseline"
    unchecked = record(timing=fast)  # control: the same timing with no failure on record wins
    assert rank_branches([baseline, unchecked])["champion"] == "b"


def test_a_failure_on_record_excludes_a_branch_whose_verdict_is_unset() -> None:
    """Belt and braces: a record with a failure is never ranked, whatever `correct` says."""
    fast = dict(TIMING, median_ms=0.1, min_ms=0.09, max_ms=0.11, mean_ms=0.1, ci95_ms=[0.095, 0.105])
    suspicious = BranchRecord("case", "cpu", "b", "b.cpp", correct=None, failure=FAILURE, timing=fast)
    baseline = BranchRecord("case", "cpu", "baseline", "kernel.cpp", correct=True, timing=TIMING)
    assert rank_branches([baseline, suspicious])["champion"] == "baseline"


def test_records_of_different_branches_do_not_merge() -> None:
    with pytest.raises(ValueError, match="different branches"):
        record().merge(BranchRecord("case", "cpu", "other", "other.cpp"))


@pytest.mark.parametrize("correctness_first", [True, False])
def test_the_correctness_tests_failure_is_kept_over_the_pre_timing_one(correctness_first: bool) -> None:
    """Under xdist both the correctness test (shrunk by Hypothesis) and the check before timing (a boundary dim)
    can find the same branch wrong in different workers: the shrunk example is the one to report."""
    shrunk = dict(FAILURE, stage="correctness")
    boundary = dict(FAILURE, dims={"N": 1999}, seed=0, stage="before timing")
    views = [record(correct=False, failure=shrunk), record(correct=False, failure=boundary)]
    result = merged(*(views if correctness_first else views[::-1]))
    assert result.correct is False and result.failure == shrunk


def test_a_median_from_too_few_clean_samples_never_crowns_a_branch() -> None:
    def timed(branch: str, median: float, quality: str = "ok") -> BranchRecord:
        record = BranchRecord("c", "cuda", branch, f"{branch}.cu", correct=True)
        record.timing = {"median_ms": median, "iqr_ms": 0.001, "min_ms": median, "max_ms": median, "mean_ms": median,
                         "ci95_ms": [median * 0.99, median * 1.01], "rounds": 50, "rel_spread": 0.01,
                         "quality": quality}
        return record

    base, late = timed("baseline", 1.0), timed("late", 0.5, quality="too few clean samples")
    assert rank_branches([base, late])["champion"] == "baseline"
    assert rank_branches([base, timed("late", 0.5)])["champion"] == "late"


def test_interpreter_timings_never_crown_a_champion() -> None:
    def timed(branch: str, median: float) -> BranchRecord:
        record = BranchRecord("c", "triton", branch, f"{branch}.triton.py", correct=True)
        record.timing = {"median_ms": median, "iqr_ms": 0.001, "min_ms": median, "max_ms": median, "mean_ms": median,
                         "ci95_ms": [median * 0.99, median * 1.01], "rounds": 50, "rel_spread": 0.01,
                         "representative": False}
        return record

    assert rank_branches([timed("baseline", 1.0), timed("fast", 0.2)])["champion"] is None
