"""pytest_dcuopt: a pytest harness for kernel optimization.

Correctness against a Python reference (Hypothesis), per-branch benchmarks
(pytest-benchmark), ISA/resource checks and a run report (state.json, summary.md).
Importing this package imports nothing heavy (no torch, no triton).
"""
from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
