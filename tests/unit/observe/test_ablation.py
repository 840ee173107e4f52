"""How many ablation rounds are run and what an interval means, decided on fixed per-round medians."""
from __future__ import annotations

import pytest

from pytest_dcuopt.observe.ablation import (
    HELPS,
    HURTS,
    INCONCLUSIVE,
    NO_EFFECT,
    AblationMarkError,
    AblationSpec,
    Rules,
    another_round,
    attribution,
)

FULL_MS = 1.0e-3


def arms(*ratios: float) -> dict[str, list[list[float]]]:
    """Samples of the full branch (key "") and of one ablated build whose per-round ratio to it is given."""
    return {"": [[FULL_MS * 0.99, FULL_MS, FULL_MS * 1.01] for _ in ratios],
            "m": [[FULL_MS * r * 0.99, FULL_MS * r, FULL_MS * r * 1.01] for r in ratios]}


# A method worth about 1.7x measured on a busy machine: one round disturbed (1.0x) in the first four.
NOISY_LARGE = (1.05, 2.6, 1.5, 1.9)


def test_four_noisy_rounds_of_a_large_effect_are_inconclusive_not_ineffective() -> None:
    samples = arms(*NOISY_LARGE)
    found = attribution(samples[""], samples["m"])
    low, high = found["slowdown_interval"]
    assert low < 1.0 < 1.5 < high  # the interval holds both "no effect" and a large one
    assert found["outcome"] == INCONCLUSIVE and "holds both an effect" in found["note"]
    assert another_round(samples, ["m"], Rules())  # so the ablation goes on


def test_more_rounds_of_the_same_effect_settle_it_as_helps() -> None:
    samples = arms(*NOISY_LARGE, 1.7, 1.6, 1.8, 1.75)
    assert attribution(samples[""], samples["m"])["outcome"] == HELPS
    assert not another_round(samples, ["m"], Rules())


def test_a_tight_placebo_is_no_effect_after_the_minimum_rounds() -> None:
    samples = arms(1.01, 0.99, 1.02, 1.0)
    assert attribution(samples[""], samples["m"])["outcome"] == NO_EFFECT
    assert not another_round(samples, ["m"], Rules())
    assert another_round(arms(1.01, 0.99, 1.02), ["m"], Rules())  # below the minimum of 4 rounds


def test_at_the_cap_an_undecided_method_stays_inconclusive_and_the_rounds_stop() -> None:
    swinging = (0.8, 1.4) * 6
    samples = arms(*swinging)
    assert attribution(samples[""], samples["m"])["outcome"] == INCONCLUSIVE
    assert not another_round(samples, ["m"], Rules(max_rounds=12))
    assert another_round(samples, ["m"], Rules(max_rounds=13))


def test_pairs_and_dropped_builds_do_not_keep_the_rounds_going() -> None:
    samples = arms(1.01, 0.99, 1.02, 1.0)
    samples["a + b"] = arms(*NOISY_LARGE)["m"]
    assert not another_round(samples, ["m", "gone"], Rules())


@pytest.mark.parametrize(("low", "high", "expected"), [
    (1.03, 1.5, HELPS), (0.5, 0.97, HURTS), (0.95, 1.08, NO_EFFECT), (1.005, 1.015, NO_EFFECT),
    (0.97, 2.96, INCONCLUSIVE), (0.85, 1.05, INCONCLUSIVE), (1.01, 1.2, INCONCLUSIVE),
])
def test_the_verdict_of_an_interval(low: float, high: float, expected: str) -> None:
    assert Rules().verdict(low, high) == expected


def test_mark_keywords_for_the_cap_and_the_negligible_band() -> None:
    spec = AblationSpec.from_mark(pytest.mark.ablation(methods={"a": "-DA"}, rounds=6).mark)
    assert (spec.rounds, spec.max_rounds, spec.negligible) == (6, 12, 0.1)
    with pytest.raises(AblationMarkError, match=r"max_rounds=3 must be an integer >= rounds \(4\)"):
        AblationSpec.from_mark(pytest.mark.ablation(methods={"a": "-DA"}, max_rounds=3).mark)
    with pytest.raises(AblationMarkError, match=r"negligible=0.01 must be a fraction in \[min_effect, 1\)"):
        AblationSpec.from_mark(pytest.mark.ablation(methods={"a": "-DA"}, negligible=0.01).mark)
