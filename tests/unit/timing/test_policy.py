from __future__ import annotations

import itertools

import pytest

from pytest_dcuopt.timing.policy import (
    TimingPolicy,
    median_ci,
    sample_until_stable,
    should_stop,
    significantly_faster,
    summarize,
)


def test_summary_is_robust_statistics_of_real_samples() -> None:
    summary = summarize([0.001, 0.002, 0.003, 0.004, 0.100])  # one outlier
    assert summary.median_ms == pytest.approx(3.0)
    assert summary.min_ms == pytest.approx(1.0) and summary.max_ms == pytest.approx(100.0)
    assert summary.iqr_ms == pytest.approx(2.0)
    assert summary.rounds == 5


def test_median_ci_brackets_the_median() -> None:
    values = sorted(float(v) for v in range(100))
    lo, hi = median_ci(values)
    assert lo < 49.5 < hi and hi - lo < 25


def test_stops_on_noise_target_once_enough_samples() -> None:
    policy = TimingPolicy(min_samples=10, target_rel_spread=0.01, min_time_s=0.0)
    assert should_stop([1.0] * 9, 0.0, policy) is None
    assert "noise target" in (should_stop([1.0] * 10, 0.0, policy) or "")


def test_noisy_samples_run_until_the_time_cap() -> None:
    policy = TimingPolicy(min_samples=3, target_rel_spread=0.001, min_time_s=0.0, max_time_s=5.0)
    noisy = itertools.cycle([1.0, 2.0, 3.0, 4.0])
    clock = itertools.count(0.0, 0.5)
    seconds, reason = sample_until_stable(lambda: next(noisy), lambda: next(clock), policy)
    assert "time cap" in reason and 5 <= len(seconds) <= 12


def test_faster_only_beyond_noise() -> None:
    base = summarize([1.0, 1.01, 0.99, 1.02, 0.98] * 4)
    overlapping = summarize([0.99, 1.0, 0.98, 1.01, 0.97] * 4)
    clearly = summarize([0.5, 0.51, 0.49, 0.5, 0.52] * 4)
    assert not significantly_faster(overlapping, base)
    assert significantly_faster(clearly, base)
