"""The checked calls of a timing request (`plan_for`) and the A/B rounds the pytest process bounds (`bounded_round`):
both chosen from the run's secret seed; what an A/B round samples (`ab_round_policy`); the check every timing
function is handed."""
from __future__ import annotations

import inspect

from pytest_dcuopt.bench.run import (
    ab_round_policy,
    bounded_round,
    interleave_with_baseline,
    measure,
    plan_for,
    run_benchmark,
    run_disabled,
)
from pytest_dcuopt.timing.policy import TimingPolicy
from pytest_dcuopt.toolchains.binding import BindSpec
from pytest_dcuopt.toolchains.exchange import set_run_seed

QUICK = TimingPolicy(warmup_s=0.01, min_samples=3, min_time_s=0.0, max_time_s=0.05, side_figures=False)


def test_the_own_timing_and_the_last_a_b_round_start_from_different_outputs() -> None:
    """One of the two requests that make the announced checks starts from the NaN poison, the other from junk, and
    which one depends on the run's secret seed."""
    own_starts = set()
    for run in range(16):
        set_run_seed(1000 + run)
        spec = BindSpec({"N": 64}, 0, {"x": (64,), "y": (64,)})
        own = plan_for(QUICK, spec, "timing")
        last = plan_for(QUICK, spec, "A/B round", 3, announced=True)
        assert own.poisoned_start != last.poisoned_start
        own_starts.add(own.poisoned_start)
    assert own_starts == {True, False}


def test_the_last_a_b_round_and_one_other_chosen_from_the_secret_seed_are_bounded() -> None:
    chosen = set()
    spec = BindSpec({"N": 64}, 0, {"x": (64,), "y": (64,)})
    for run in range(24):
        set_run_seed(2000 + run)
        bounded = [index for index in range(4) if bounded_round(spec, index, 4)]
        assert len(bounded) == 2 and bounded[-1] == 3
        chosen.add(bounded[0])
    assert chosen == {0, 1, 2}
    assert bounded_round(spec, 0, 1)


def test_the_ab_rounds_of_both_sides_sample_within_one_timings_budget() -> None:
    policy = TimingPolicy(max_time_s=2.0, warmup_s=0.2)
    rounds = 4
    short = ab_round_policy(policy, rounds)
    assert 2 * rounds * short.max_time_s == policy.max_time_s
    assert short.min_samples == 3 and short.min_time_s == 0.0 and not short.side_figures
    assert short.warmup_s == policy.warmup_s / rounds


def test_every_timing_function_takes_the_check_as_a_required_argument() -> None:
    """bench/ imports nothing of check/: its caller hands it the check of every timing reply (or, under
    --benchmark-disable, the one checked call), with no default to fall back on."""
    for function, name in ((measure, "check"), (run_benchmark, "check"), (interleave_with_baseline, "check"),
                           (run_disabled, "check_once")):
        parameter = inspect.signature(function).parameters[name]
        assert parameter.default is inspect.Parameter.empty, f"{function.__name__}({name}=...) has a default"
        assert parameter.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
