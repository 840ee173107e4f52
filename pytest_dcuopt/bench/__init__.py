"""The benchmark stage: time a verified branch in its worker and hand the samples to pytest-benchmark.

Stable: `run.measure(variant, policy, timeout_s)`, the public timing API."""

__all__ = ["run"]  # the stable submodules; the others may change
