"""The benchmark stage: time a verified branch in its worker and hand the samples to pytest-benchmark.

Stable: `run.measure(variant, check, policy, timeout_s)`, the public timing API (`check`:
`check.checked_calls.TIMING_REPLY_CHECK`)."""

__all__ = ["run"]  # the stable submodules; the others may change
