"""The ablation verdict on fixed numbers: an effect only when the whole interval clears 1 by `min_effect`."""
from __future__ import annotations

import pytest

from pytest_dcuopt.observe.ablation import HELPS, HURTS, NO_EFFECT, attribution
from pytest_dcuopt.timing.policy import summarize


def summary(median_s: float, spread: float = 0.002) -> object:
    return summarize([median_s * (1 + spread * k) for k in (-2, -1, 0, 1, 2)] * 10)


@pytest.mark.parametrize(("ablated_s", "expected"), [
    (2.0e-3, HELPS),       # removing the method doubles the time: it helps
    (1.005e-3, NO_EFFECT),  # 0.5% slower: inside the 2% noise threshold
    (0.5e-3, HURTS),       # removing it halves the time: the method hurts
])
def test_verdicts(ablated_s: float, expected: str) -> None:
    found = attribution(summary(1e-3), summary(ablated_s))  # type: ignore[arg-type]
    assert found["outcome"] == expected, found
    low, high = found["slowdown_interval"]
    assert low <= found["slowdown_when_removed"] <= high


def test_a_precise_one_percent_change_is_not_an_effect_below_the_threshold() -> None:
    tight = attribution(summary(1e-3, 1e-5), summary(1.01e-3, 1e-5))  # type: ignore[arg-type]
    assert tight["outcome"] == NO_EFFECT and tight["slowdown_interval"][0] > 1.0
    assert attribution(summary(1e-3, 1e-5), summary(1.01e-3, 1e-5), min_effect=0.005)["outcome"] == HELPS  # type: ignore[arg-type]
