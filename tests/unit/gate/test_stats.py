"""The gate's statistics and rule on synthetic raw samples (gate.stats, gate.rule)."""
from __future__ import annotations

import itertools
import math
import statistics

import numpy as np
import pytest

from pytest_dcuopt.gate.rule import AMBIGUOUS, FAST, SAME, SLOW, GateRule, decide
from pytest_dcuopt.gate.stats import ratio_interval

DEFAULT_RULE = GateRule()


def samples(median_ms: float, spread: float, n: int, seed: int) -> list[float]:
    """Right-skewed timings like real ones: a floor plus lognormal noise of relative size `spread`."""
    rng = np.random.default_rng(seed)
    return list(median_ms * (1 + spread * (rng.lognormal(0.0, 0.5, n) - 1.0)))


def verdict(before: list[float], after: list[float], rule: GateRule = DEFAULT_RULE) -> str:
    return decide(ratio_interval(before, after, rule.confidence), rule)


def test_the_estimate_is_the_median_of_pairwise_log_ratios() -> None:
    before, after = [1.0, 1.2, 0.9, 1.1], [1.5, 1.4, 1.9]
    change = ratio_interval(before, after)
    logs = [math.log(a / b) for a, b in itertools.product(after, before)]
    assert change.ratio == pytest.approx(math.exp(statistics.median(logs)))
    assert change.ratio_low <= change.ratio <= change.ratio_high
    assert (change.before_n, change.after_n) == (4, 3)
    assert change.shift_ms == pytest.approx(statistics.median(after) - statistics.median(before))


def test_a_scaled_copy_gives_exactly_its_scale() -> None:
    before = samples(1.0, 0.3, 50, 12)
    change = ratio_interval(before, [1.25 * t for t in before])
    assert change.ratio == pytest.approx(1.25) and 1.1 < change.ratio_low < 1.25 < change.ratio_high


def test_a_a_samples_are_same() -> None:
    assert verdict(samples(1.0, 0.02, 300, 1), samples(1.0, 0.02, 300, 2)) == SAME


def test_a_tight_ten_percent_slowdown_is_slow_and_a_speedup_fast() -> None:
    before = samples(1.0, 0.01, 200, 3)
    assert verdict(before, samples(1.10, 0.01, 200, 4)) == SLOW
    assert verdict(before, samples(0.90, 0.01, 200, 5)) == FAST


def test_overlapping_noisy_samples_are_ambiguous_or_same_never_slow() -> None:
    found = {verdict(samples(1.0, 0.4, 12, seed), samples(1.0, 0.4, 12, seed + 100)) for seed in range(20)}
    assert found <= {AMBIGUOUS, SAME} and AMBIGUOUS in found


def test_a_significant_change_below_the_threshold_is_same() -> None:
    before, after = samples(1.0, 0.002, 400, 6), samples(1.02, 0.002, 400, 7)
    change = ratio_interval(before, after)
    assert change.ratio_low > 1  # statistically significant ...
    assert decide(change, GateRule(threshold=0.05)) == SAME  # ... but not practically
    assert decide(change, GateRule(threshold=0.01, floor_us=0)) == SLOW


def test_the_absolute_floor_keeps_tiny_kernels_from_failing() -> None:
    before, after = samples(0.002, 0.01, 300, 8), samples(0.0024, 0.01, 300, 9)  # 2 us -> 2.4 us: +20%, 0.4 us
    assert verdict(before, after, GateRule(floor_us=1.0)) == SAME
    assert verdict(before, after, GateRule(floor_us=0.1)) == SLOW


def test_the_interval_covers_zero_about_as_often_as_it_claims() -> None:
    """A/A with 30 samples a side, 300 times: the 95% interval excludes a ratio of 1 in about 5% of them."""
    misses = sum(not (s.ratio_low <= 1 <= s.ratio_high)
                 for s in (ratio_interval(samples(1.0, 0.1, 30, 2 * k), samples(1.0, 0.1, 30, 2 * k + 1))
                           for k in range(300)))
    assert 3 <= misses <= 30, misses


def test_a_a_comparisons_raise_no_false_slow() -> None:
    slow = sum(verdict(samples(1.0, 0.05, 100, 2 * k), samples(1.0, 0.05, 100, 2 * k + 1)) == SLOW
               for k in range(200))
    assert slow == 0


def test_long_sample_sets_are_thinned_not_refused() -> None:
    change = ratio_interval(samples(1.0, 0.01, 5000, 10), samples(1.1, 0.01, 4500, 11))
    assert (change.before_n, change.after_n) == (5000, 4500)
    assert 0.09 < change.rel < 0.11


def test_too_few_or_non_positive_samples_are_refused_saying_which() -> None:
    with pytest.raises(ValueError, match="1 before"):
        ratio_interval([1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match=r"-0\.001 ms after"):
        ratio_interval([1.0, 1.1], [-0.001, 1.0])
