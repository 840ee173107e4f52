"""The default dims (dims.json, the timing size) verified once per branch and process, before anything measures it.

The correctness test sets `Variant.default_verified` when its boundary dims pass there; a benchmark, an ablation or a
baseline taken for another worker's A/B whose branch has no such verdict here makes this one checked call first.
"""
from __future__ import annotations

from ..variant import Variant
from .verify import checked_call


def verify_default(variant: Variant, nodeid: str) -> None:
    """One checked call at the default dims with seed 0, unless this process verified them already; raises
    AssertionError (a wrong result) or DcuOptError (a crash, a hang) like `verify.checked_call`."""
    if variant.default_verified:
        return
    checked_call(variant, variant.case.dims, 0, nodeid)
    variant.default_verified = True
