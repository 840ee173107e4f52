"""The ablation verdict on fixed numbers: rounds are the replicates (paired ratios, a t-interval on their logs), and
an effect counts only when the whole interval clears 1 by `min_effect`."""
from __future__ import annotations

import math

import pytest

from pytest_dcuopt.observe.ablation import (
    HELPS,
    HURTS,
    INCONCLUSIVE,
    INDEPENDENT,
    NO_EFFECT,
    REDUNDANT,
    SYNERGY,
    Rules,
    attribution,
    interaction,
    method_pairs,
    paired_ratios,
    t975,
)
from pytest_dcuopt.timing.policy import summarize

FULL = [[1.00e-3, 1.01e-3, 0.99e-3]] * 4  # four rounds of the full branch, median 1 ms each


def rounds_at(*medians_s: float) -> list[list[float]]:
    return [[m * 0.99, m, m * 1.01] for m in medians_s]


@pytest.mark.parametrize(("ablated", "expected"), [
    (rounds_at(2.0e-3, 2.1e-3, 1.9e-3, 2.0e-3), HELPS),        # removing the method doubles the time: it helps
    (rounds_at(1.005e-3, 1.0e-3, 1.01e-3, 1.0e-3), NO_EFFECT),  # under 1% slower: inside the 2% noise threshold
    (rounds_at(0.5e-3, 0.52e-3, 0.49e-3, 0.5e-3), HURTS),      # removing it halves the time: the method hurts
])
def test_verdicts(ablated: list[list[float]], expected: str) -> None:
    found = attribution(FULL, ablated)
    assert found["outcome"] == expected, found
    low, high = found["slowdown_interval"]
    assert low <= found["slowdown_when_removed"] <= high


def test_the_interval_is_the_t_interval_of_the_log_ratios() -> None:
    found = attribution(FULL, rounds_at(1.1e-3, 1.3e-3, 1.2e-3, 1.2e-3))
    logs = [math.log(r) for r in (1.1, 1.3, 1.2, 1.2)]
    mean = sum(logs) / 4
    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / 3)
    assert found["round_ratios"] == [1.1, 1.3, 1.2, 1.2]
    assert found["slowdown_when_removed"] == pytest.approx(math.exp(mean), abs=1e-4)
    assert found["slowdown_interval"] == pytest.approx([math.exp(mean - 3.182 * sd / 2),
                                                        math.exp(mean + 3.182 * sd / 2)], abs=1e-4)
    assert found["outcome"] == HELPS  # low end about 1.07


def test_rounds_that_disagree_claim_no_effect_where_pooling_the_samples_claimed_one() -> None:
    """A placebo on a shared machine: the ablated build ran 12% slower in three rounds (another process was busy
    then) and 1% slower in the quiet one. Pooled as independent samples, the ablated arm's median CI clears the
    full arm's by more than 2%; the rounds' paired ratios disagree too much for that, so no effect is claimed (and
    the interval is too wide to call it negligible either: inconclusive)."""
    full = [[1.000e-3] * 20, [1.002e-3] * 20, [0.998e-3] * 20, [1.000e-3] * 20]
    ablated = [[1.010e-3] * 20, [1.120e-3] * 20, [1.122e-3] * 20, [1.121e-3] * 20]
    pooled_full, pooled_ablated = (summarize([s for r in arm for s in r]) for arm in (full, ablated))
    assert pooled_ablated.ci95_ms[0] / pooled_full.ci95_ms[1] > 1.02  # the old rule's verdict would be "helps"
    found = attribution(full, ablated)
    assert found["outcome"] == INCONCLUSIVE, found
    assert found["slowdown_interval"][0] < 1.02 < found["slowdown_interval"][1]


def test_a_precise_one_percent_change_is_not_an_effect_below_the_threshold() -> None:
    precise = rounds_at(1.010e-3, 1.0101e-3, 1.0099e-3, 1.010e-3)
    tight = attribution(FULL, precise)
    assert tight["outcome"] == NO_EFFECT and tight["slowdown_interval"][0] > 1.0
    assert attribution(FULL, precise, Rules(min_effect=0.005))["outcome"] == HELPS


def test_fewer_than_two_paired_rounds_claim_nothing() -> None:
    found = attribution(FULL[:1], rounds_at(3e-3))
    assert found["outcome"] == INCONCLUSIVE and found["slowdown_interval"] is None
    assert "needs 2" in found["note"]


def test_rounds_missing_on_either_side_are_not_paired() -> None:
    assert paired_ratios([[1.0], [], [2.0]], [[2.0], [5.0], []]) == [2.0]


def test_t_quantiles() -> None:
    assert t975(1) == 12.706 and t975(3) == 3.182 and t975(30) == 2.042 and t975(100) == 1.96


def test_pairs_are_formed_for_two_to_four_methods_with_both_switches() -> None:
    two = {"a": ("-DA",), "b": ("-DB",)}
    assert method_pairs(two) == {"a + b": ("-DA", "-DB")}
    assert len(method_pairs({k: (f"-D{k}",) for k in "abcd"})) == 6
    assert method_pairs({"a": ("-DA",)}) == {} and method_pairs({k: (f"-D{k}",) for k in "abcde"}) == {}


@pytest.mark.parametrize(("both_ms", "expected"), [
    (4.0e-3, INDEPENDENT),  # 2x and 2x apart, 4x together: the product
    (6.0e-3, SYNERGY),      # 6x together: worth more together than apart
    (2.1e-3, REDUNDANT),    # barely more than either alone: they overlap
])
def test_interactions(both_ms: float, expected: str) -> None:
    wobble = (1.0, 1.01, 0.99, 1.0)
    found = interaction(FULL, rounds_at(*(2e-3 * w for w in wobble)), rounds_at(*(2e-3 for _ in wobble)),
                        rounds_at(*(both_ms * w for w in wobble)))
    assert found["interaction_outcome"] == expected, found
    assert found["interaction"] == pytest.approx(both_ms / 4e-3, rel=0.01)
    low, high = found["interaction_interval"]
    assert low <= found["interaction"] <= high


def test_an_interaction_needs_two_rounds_with_all_four_builds() -> None:
    found = interaction(FULL, rounds_at(2e-3), rounds_at(2e-3), rounds_at(4e-3))
    assert found["interaction_outcome"] == "not estimated" and found["interaction"] is None
