"""Hypothesis settings profiles safe for kernels: no deadline (first calls compile and load)."""
from __future__ import annotations


def register_hypothesis_settings() -> None:
    from hypothesis import HealthCheck, settings

    slow_ok = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
    settings.register_profile("dcuopt-dev", max_examples=25, deadline=None, suppress_health_check=slow_ok)
    settings.register_profile("dcuopt-ci", max_examples=60, deadline=None, derandomize=True,
                              suppress_health_check=slow_ok, print_blob=True)
