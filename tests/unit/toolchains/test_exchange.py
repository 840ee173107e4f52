"""The run's secret seed and what is drawn from it (toolchains/exchange.py)."""
from __future__ import annotations

import pytest

from pytest_dcuopt.toolchains import exchange


@pytest.fixture(autouse=True)
def restore_run_seed() -> object:
    before = list(exchange._RUN_SEED)
    yield
    exchange._RUN_SEED[:] = before


def test_the_inputs_depend_on_the_run_seed_and_the_examples_seed() -> None:
    exchange.set_run_seed(1)
    first = exchange.draw_seed(0)
    assert exchange.draw_seed(0) == first and exchange.draw_seed(1) != first
    exchange.set_run_seed(2)
    assert exchange.draw_seed(0) != first  # another run: other inputs
    assert 0 <= exchange.draw_seed(0) < 2**exchange.RUN_SEED_BITS


def test_a_plan_is_shared_by_every_branch_of_a_run_and_differs_per_request() -> None:
    exchange.set_run_seed(7)
    dims = {"N": 10}
    assert exchange.plan_seed("timing", dims) == exchange.plan_seed("timing", dict(dims))
    assert exchange.plan_seed("A/B round", dims, 0) != exchange.plan_seed("A/B round", dims, 1)
    assert exchange.plan_seed("timing", dims) != exchange.plan_seed("timing", {"N": 11})


def test_one_checked_timed_call_is_always_reached_and_the_choice_varies() -> None:
    chosen = [exchange.checked_call_numbers(seed, min_samples=10) for seed in range(200)]
    assert all(numbers[0] < 4 and all(0 <= n < 11 for n in numbers) for numbers in chosen)
    assert len({numbers for numbers in chosen}) > 10
    assert exchange.new_run_seed() != exchange.new_run_seed()
