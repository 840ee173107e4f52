"""The checks a benchmark test makes before it times, or instead of timing: a branch this process has no verdict on is
checked here first, and one found wrong is marked incorrect and never timed. `ready_to_time` makes them all, in
order, before the benchmark test's first timing (bench/ times, and never checks).

The correctness test sets `Variant.verdicts.default_verified` when its boundary dims pass at the default dims
(dims.json, the timing size); a benchmark, an ablation or a baseline taken for another worker's A/B whose branch has no
such verdict here makes that one checked call first (`verify_default`).
"""
from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from ..errors import DcuOptError
from ..variant import Variant
from .checked_calls import checked_call, size_note
from .correctness import (
    Found,
    boundary_failure,
    confirm_failure,
    describe_exception,
    mark_incorrect,
    new_inputs_failure,
    with_notes,
)
from .example_dims import boundary_dims
from .verdicts import checked_boundary, verified_default


def verify_default(variant: Variant, nodeid: str) -> None:
    """One checked call at the default dims with seed 0, unless this process verified them already; raises
    AssertionError (a wrong result) or DcuOptError (a crash, a hang) like `checked_calls.checked_call`."""
    if variant.verdicts.default_verified:
        return
    checked_call(variant, variant.case.dims, 0, nodeid)
    verified_default(variant)


@dataclass(frozen=True)
class ReadyToTime:
    """What a benchmark test's checks before timing found (`ready_to_time`)."""

    wrong: str | None = None  # the boundary dims' failure: the branch is marked incorrect and not timed
    boundary_s: float | None = None  # checking the boundary dims here took this long (None: not checked here)
    baseline: Variant | None = None  # the baseline for the A/B (None: none to time against here)


def ready_to_time(variant: Variant, dims: Mapping[str, Any], size: str | None, nodeid: str,
                  find_baseline: Callable[[], tuple[Variant | None, bool]]) -> ReadyToTime:
    """Everything a benchmark test checks before it times, so that no check runs between its timings, in order: the
    boundary dims where this process has no verdict on the branch (`check_before_timing`; a failure is returned at
    once), the point (`verify_point`; a wrong result fails the test), then the baseline for the A/B, which
    `find_baseline` gives once the branch passed: (the baseline or None, whether its default dims are verified here).
    One verified here and found wrong (or crashing) is dropped: no A/B against it."""
    boundary_s = None
    if not variant.verdicts.boundary_checked:  # no verdict here yet (deselected, or another xdist worker)
        started = time.perf_counter()
        wrong = check_before_timing(variant, nodeid)
        checked_boundary(variant)
        boundary_s = time.perf_counter() - started
        if wrong is not None:
            return ReadyToTime(wrong, boundary_s)
    verify_point(variant, dims, size, nodeid)
    baseline, verify_here = find_baseline()
    if baseline is not None and verify_here:
        try:
            verify_default(baseline, nodeid)
        except (AssertionError, DcuOptError):
            baseline = None
    return ReadyToTime(None, boundary_s, baseline)


def check_ablated_build(ablated: Variant, nodeid: str) -> tuple[dict[str, Any], str] | None:
    """A build of a branch without one of its methods (observe/ablation.py), checked at its case's boundary dims with
    seed 0: the first wrong (dims, message), or None. Only a build right at all of them is timed: it is marked
    verified at the default dims, which are among them (the first, with the seed `verify_default` uses)."""
    assert ablated.reference is not None
    passed = []
    for dims in boundary_dims(ablated.case.dims, ablated.reference.dim_ranges):
        try:
            checked_call(ablated, dims, 0, nodeid)
        except (AssertionError, DcuOptError) as exc:
            return dims, str(exc)
        passed.append(dims)
    if dict(ablated.case.dims) in passed:
        verified_default(ablated)
    return None


def check_default_once(variant: Variant, nodeid: str, dims: Mapping[str, Any] | None = None) -> str | None:
    """--benchmark-disable: the benchmark test's single call (pytest-benchmark calls its target once), at the
    default dims (or the benchmark size's `dims`) and checked; a wrong result marks the branch incorrect. The
    failure message, or None."""
    variant.last_failure = None
    dims = variant.case.dims if dims is None else dims
    try:
        checked_call(variant, dims, 0, nodeid)
        found = new_inputs_failure(variant, dims, nodeid)
    except (AssertionError, DcuOptError) as exc:
        found = Found(with_notes(exc), variant.last_failure)
    except Exception as exc:  # an unforeseen error is no pass
        found = Found(f"the check of {variant.label} stopped: {describe_exception(exc)}", variant.last_failure)
    try:
        if found is not None and found.needs_repeats:
            found = confirm_failure(variant, found, nodeid)
    finally:
        variant.record.examples = variant.examples
    if found is None:
        if dict(dims) == dict(variant.case.dims):
            verified_default(variant)
        return None
    mark_incorrect(variant, found, nodeid, "before timing")
    return found.message


def check_before_timing(variant: Variant, nodeid: str) -> str | None:
    """Before timing a branch this process has no verdict on (its correctness test was deselected, or ran in
    another xdist worker), run the deterministic boundary dims: a branch wrong there is marked incorrect and
    never timed. The failure message, or None (the verdict stays unset: Hypothesis did not run here)."""
    if variant.record.correct is not None or variant.verdicts.failed_correctness:
        return None
    variant.last_failure = None
    found = None
    try:
        found = boundary_failure(variant, nodeid)
        if found is not None and found.needs_repeats:
            found = confirm_failure(variant, found, nodeid)
    except Exception as exc:  # an unforeseen error is no pass: the branch is not timed
        found = Found(f"the pre-timing check of {variant.label} stopped: {describe_exception(exc)}",
                      variant.last_failure)
    variant.record.examples = variant.examples
    if found is None:
        return None
    mark_incorrect(variant, found, nodeid, "before timing")
    return found.message



def verify_point(variant: Variant, dims: Mapping[str, Any], size: str | None, nodeid: str) -> None:
    """Before a benchmark test times its branch at `dims` (a benchmark size's, named `size`, or the default dims):
    the default dims verified once (`verify_default`), and at a size each ref.py input set (`check_input_sets_at`).
    A wrong result fails the test."""
    verify_default(variant, nodeid)
    if size is not None:
        check_input_sets_at(variant, dims, nodeid)


def check_input_sets_at(variant: Variant, dims: Mapping[str, Any], nodeid: str) -> None:
    """At a benchmark size's dims, each ref.py `input_sets` entry once (seed 0) before timing: the correctness test
    checks them at the default dims only, and a kernel that works less at the size it is timed at, within the tolerance
    of the timed distribution only, is wrong there. A wrong one marks the branch incorrect and fails the test."""
    assert variant.reference is not None
    for name in variant.reference.input_sets:
        try:
            checked_call(variant, dims, 0, nodeid, input_set=name)
        except (AssertionError, DcuOptError) as exc:
            found = Found(f"{with_notes(exc)}{size_note(variant, dims)}", variant.last_failure)
            mark_incorrect(variant, found, nodeid, "before timing")
            pytest.fail(found.message, pytrace=False)
