"""The deterministic examples and the Hypothesis draws of float scalars (alpha, beta, eps)."""
from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_dcuopt.check.example_dims import boundary_dims, dims_strategy, scalar_values

DEFAULTS = {"N": 64, "alpha": 1.0, "beta": 1.0}
RANGES = {"alpha": (0.25, 4.0), "beta": (0.25, 4.0)}


def is_float32(value: float) -> bool:
    return float(np.float32(value)) == value


def test_scalar_values_are_the_ends_then_zero_and_the_negation_where_the_range_holds_them() -> None:
    assert scalar_values(1.0, 0.25, 4.0) == [4.0, 0.25]
    assert scalar_values(0.5, -2.0, 2.0) == [2.0, -2.0, 0.0, -0.5]
    assert scalar_values(0.0, -1.0, 1.0) == [1.0, -1.0]
    values = scalar_values(0.1, 0.1 / 4, 0.1 * 4)  # not float32 numbers: moved inward onto float32 values
    assert all(is_float32(v) and 0.025 <= v <= 0.4 for v in values) and len(values) == 2


def test_boundary_dims_vary_each_float_scalar_alone() -> None:
    examples = boundary_dims(DEFAULTS, {"N": (1, 64)}, scalar_ranges=RANGES)
    assert examples[0] == DEFAULTS
    assert {"N": 64, "alpha": 4.0, "beta": 1.0} in examples and {"N": 64, "alpha": 1.0, "beta": 0.25} in examples
    # alpha != beta in some example: a kernel that swaps them is wrong there
    assert any(dims["alpha"] != dims["beta"] for dims in examples)


def test_boundary_dims_keep_float_scalars_without_a_range() -> None:
    assert all(dims["alpha"] == 1.0 for dims in boundary_dims(DEFAULTS, {"N": (1, 64)}))


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_drawn_float_scalars_stay_in_range_and_are_float32_values(data: st.DataObject) -> None:
    dims: dict[str, Any] = data.draw(dims_strategy({"N": (1, 64)}, DEFAULTS, scalar_ranges=RANGES))
    for name in ("alpha", "beta"):
        assert 0.25 <= dims[name] <= 4.0 and is_float32(dims[name])
    assert 1 <= dims["N"] <= 64


def test_draws_give_alpha_and_beta_different_values() -> None:
    seen: list[tuple[float, float]] = []

    @settings(max_examples=25, deadline=None, derandomize=True)
    @given(dims=dims_strategy({"N": (1, 64)}, DEFAULTS, scalar_ranges=RANGES))
    def draw(dims: dict[str, Any]) -> None:
        seen.append((dims["alpha"], dims["beta"]))

    draw()
    assert sum(alpha != beta for alpha, beta in seen) >= 10


def upper_half_draws(upper: bool) -> int:
    """How many of 60 derandomized draws of N in [1, 4096] land in its upper half, besides the special values."""
    seen: list[int] = []

    @settings(max_examples=60, deadline=None, derandomize=True, database=None)
    @given(dims=dims_strategy({"N": (1, 4096)}, {"N": 64}, upper=upper))
    def draw(dims: dict[str, Any]) -> None:
        seen.append(dims["N"])

    draw()
    return sum(n > 2048 and n not in (4093, 4095, 4096, 4097) for n in seen)


def test_the_long_profile_draws_reach_the_upper_half_of_a_range() -> None:
    assert upper_half_draws(upper=True) >= 15
    assert upper_half_draws(upper=True) > 2 * upper_half_draws(upper=False)
