"""The correctness flow of `test_correctness_<toolchain>[<branch>]`: which calls decide a branch's verdict.

`run_correctness` runs deterministic boundary dims first (`example_dims.boundary_dims`: the defaults, each dim's top,
default + 1, just past powers of two, the bottom), each ref.py input set, then Hypothesis draws (which also shrink a
failure to a minimal example). A failing example is re-run on identical inputs to tell a wrong kernel from a
nondeterministic one, and a branch that passed is called a few more times at the default dims: a sometimes-wrong
kernel is a wrong kernel. Each call is one `checked_calls.checked_call`.
"""
from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import DcuOptError, KernelTimeout
from ..variant import Variant
from .checked_calls import checked_call, reproduce_of
from .example_dims import boundary_dims, dims_strategy
from .verdicts import found_correct, found_incorrect, verified_default

# Identical calls (same dims, seed, inputs) that re-run a wrong example: all wrong = a wrong kernel,
# some right = a nondeterministic one (a race, an uninitialised read, state kept between calls).
REPEAT_CALLS = 8
# Extra identical calls at the default dims of a branch that passed everything else.
STABILITY_CALLS = 3
# Hypothesis profiles whose draws reach the top of every dim range (a third from its upper half).
LONG_PROFILES = ("dcuopt-ci",)


@dataclass(frozen=True)
class CheckSettings:
    """What the correctness stage needs from the run's options."""

    examples: int | None
    hypothesis_profile: str
    replay_dims: dict[str, Any] | None = None
    replay_seed: int | None = None
    replay_input_set: str | None = None  # the ref.py `input_sets` entry the replayed example drew from


@dataclass(frozen=True)
class Found:
    """A failure: the text pytest shows, the failing call's record (`variant.last_failure`), and whether
    Hypothesis already saw it not reproduce (Flaky)."""

    message: str
    details: dict[str, Any] | None
    flaky: bool = False

    @property
    def wrong_values(self) -> bool:
        """A wrong result (re-run it to check it reproduces), not a crash or hang (re-running only repeats it)."""
        return self.details is not None and ("mismatches" in self.details or "problems" in self.details)

    @property
    def needs_repeats(self) -> bool:
        """Wrong values whose reproducibility is not known yet (the stability check already knows its own)."""
        return self.wrong_values and "nondeterministic" not in (self.details or {})


def run_correctness(variant: Variant, settings: CheckSettings, nodeid: str) -> str | None:
    """The failure message of the first wrong result (None when every example passed); updates the record.

    Every way this can fail (a wrong value, a crash, a hang, Hypothesis reporting a flaky or multiple
    failures, an error in the harness) marks the branch incorrect with its failure kept: it is then
    neither timed nor ranked.
    """
    variant.last_failure = None
    try:
        if settings.replay_dims is not None:
            found = replay(variant, settings, nodeid)
        else:
            found = first_failure(variant, settings, nodeid)
        if found is not None and found.needs_repeats:
            found = confirm_failure(variant, found, nodeid)
    except Exception as exc:  # never leave the verdict unset: an unforeseen error is not a pass
        found = Found(f"the correctness check of {variant.label} stopped: {describe_exception(exc)}",
                      variant.last_failure)
    variant.record.examples = variant.examples
    if found is None:
        found_correct(variant)
        return None
    mark_incorrect(variant, found, nodeid, "correctness")
    return found.message


def mark_incorrect(variant: Variant, found: Found, nodeid: str, stage: str) -> None:
    """A failure of any kind: the branch is incorrect (so neither timed nor ranked) and its failure is kept.
    `stage` says which check found it (the merge of xdist records prefers the correctness test's, shrunk one)."""
    found_incorrect(variant)
    variant.record.failure = {**failure_record(variant, found, nodeid), "stage": stage}


def failure_record(variant: Variant, found: Found, nodeid: str) -> dict[str, Any]:
    if found.details is None:  # the failure came from no kernel call (e.g. Hypothesis itself)
        dims = dict(variant.case.dims)
        return {"dims": dims, "seed": 0, "message": found.message, "reproduce": reproduce_of(nodeid, dims, 0)}
    return dict(found.details)


def replay(variant: Variant, settings: CheckSettings, nodeid: str) -> Found | None:
    dims = {**variant.case.dims, **(settings.replay_dims or {})}
    try:
        checked_call(variant, dims, settings.replay_seed or 0, nodeid, input_set=settings.replay_input_set)
    except (AssertionError, DcuOptError) as exc:
        return Found(with_notes(exc), variant.last_failure)
    return None


def first_failure(variant: Variant, settings: CheckSettings, nodeid: str) -> Found | None:
    """The deterministic boundary dims first; then Hypothesis, which also shrinks a wrong result they found."""
    variant.record.examples_run = []
    boundary = boundary_failure(variant, nodeid, variant.record.examples_run)
    if boundary is not None and not boundary.wrong_values:  # a crash or hang: searching further would repeat it
        return boundary
    boundary = boundary or input_sets_failure(variant, nodeid)
    if boundary is not None and not boundary.wrong_values:
        return boundary
    try:
        hypothesis_search(variant, settings, nodeid)
    except (AssertionError, DcuOptError) as exc:
        found = Found(with_notes(exc), variant.last_failure)
    except Exception as exc:  # Flaky (a failure that did not reproduce), several failures at once
        found = Found(describe_exception(exc), variant.last_failure, flaky=is_flaky(exc))
    else:
        return boundary or stability_failure(variant, nodeid)
    # Drawn dims repeat, so the search itself may meet a result kept per buffer (new inputs rebound into the same
    # buffers), which then does not reproduce on replay: name that cause when it is the one.
    kept = kept_result_failure(variant, nodeid) if found.wrong_values or found.flaky else None
    return kept or found


def boundary_failure(variant: Variant, nodeid: str, ran: list[dict[str, Any]] | None = None) -> Found | None:
    """The first failure among the deterministic boundary dims (`example_dims.boundary_dims`), at seed 0; each
    example is appended to `ran` before it runs."""
    assert variant.reference is not None
    for dims in boundary_dims(variant.case.dims, variant.reference.dim_ranges,
                              relations=variant.reference.relations, scalar_ranges=drawn_scalars(variant)):
        if ran is not None:
            ran.append(dict(dims))
        try:
            checked_call(variant, dims, 0, nodeid)
        except (AssertionError, DcuOptError) as exc:
            return Found(with_notes(exc), variant.last_failure)
        if dims == variant.case.dims:
            verified_default(variant)
    return None


def input_sets_failure(variant: Variant, nodeid: str) -> Found | None:
    """Each ref.py `input_sets` entry once at the default dims (the timing size), seed 0: the first failure."""
    assert variant.reference is not None
    for name in variant.reference.input_sets:
        try:
            checked_call(variant, variant.case.dims, 0, nodeid, input_set=name)
        except (AssertionError, DcuOptError) as exc:
            return Found(with_notes(exc), variant.last_failure)
    return None


def drawn_scalars(variant: Variant) -> dict[str, tuple[float, float]]:
    """The float scalars drawn for this branch (ref.py's `scalar_ranges`), less those its `solve` takes as an integer
    (a whole float in dims.json for an `int` parameter is that integer, never a fraction)."""
    assert variant.reference is not None
    integers = {p.name for p in variant.params if not p.pointer and p.is_integer}
    return {dim: bounds for dim, bounds in variant.reference.scalar_ranges.items() if dim not in integers}


def stability_failure(variant: Variant, nodeid: str) -> Found | None:
    """A branch that passed must also pass identical repeated calls at the default dims."""
    dims = dict(variant.case.dims)
    variant.last_failure = None
    wrong, done, first = repeat_identical(variant, dims, 0, nodeid, STABILITY_CALLS)
    if first is None:
        return new_inputs_failure(variant, dims, nodeid)
    details = dict(variant.last_failure or {"dims": dims, "seed": 0, "message": first,
                                            "reproduce": reproduce_of(nodeid, dims, 0)})
    prefix = (f"nondeterministic: right on the first call at the default dims, then wrong on {wrong} of {done} "
              f"identical calls (same dims, seed and inputs){NONDETERMINISM_CAUSES}")
    details.update(message=f"{prefix}\n{details['message']}", nondeterministic=True,
                   identical_calls={"calls": done, "wrong": wrong})
    return Found(f"{prefix}\n{first}", details)


NEW_INPUTS_SEED = 1
STALE_RESULT = ("wrong on a call with new inputs in the same buffers (the same dims, another seed), right after right "
                "calls on them: a kernel that keeps a result per buffer and size, or skips work when it thinks nothing "
                "changed, hands back a stale result. Compute the full result from the inputs on every call.")


def new_inputs_failure(variant: Variant, dims: Mapping[str, Any], nodeid: str) -> Found | None:
    """One more call at `dims` with another seed, after right calls there: the worker writes the new inputs into the
    buffers those calls used (run/kernel_calls.py binds once per dims), so a result kept per buffer and size is
    wrong."""
    try:
        checked_call(variant, dims, NEW_INPUTS_SEED, nodeid)
    except (AssertionError, DcuOptError) as exc:
        details = dict(variant.last_failure or {"dims": dict(dims), "seed": NEW_INPUTS_SEED, "message": str(exc),
                                                "reproduce": reproduce_of(nodeid, dims, NEW_INPUTS_SEED)})
        details["message"] = f"{STALE_RESULT}\n{details['message']}"
        return Found(f"{STALE_RESULT}\n{with_notes(exc)}", details)
    return None


NONDETERMINISM_CAUSES = (": a race, an uninitialised read or state kept between calls (e.g. a static counter). "
                         "A kernel that is sometimes wrong is wrong.")


def kept_result_failure(variant: Variant, nodeid: str) -> Found | None:
    """The stale-result failure (`new_inputs_failure`) at the default dims when a call there with seed 0 is right,
    else None: whether a wrong result found elsewhere was a result kept per buffer and size."""
    dims = dict(variant.case.dims)
    try:
        checked_call(variant, dims, 0, nodeid)
    except (AssertionError, DcuOptError):
        return None
    return new_inputs_failure(variant, dims, nodeid)


def confirm_failure(variant: Variant, found: Found, nodeid: str) -> Found:
    """Re-run the failing example on identical inputs: says whether the kernel is wrong or nondeterministic."""
    assert found.details is not None
    dims, seed = found.details["dims"], int(found.details["seed"])
    wrong, done, _ = repeat_identical(variant, dims, seed, nodeid, REPEAT_CALLS, found.details.get("input_set"))
    details = dict(found.details)
    details["identical_calls"] = {"calls": done, "wrong": wrong}
    nondeterministic = found.flaky or wrong < done
    details["nondeterministic"] = nondeterministic
    if not nondeterministic:
        return Found(found.message, details)
    prefix = (f"nondeterministic: wrong on {wrong} of {done} identical calls (dims={json.dumps(dims)} "
              f"seed={seed}, same inputs) after the failing one{NONDETERMINISM_CAUSES}")
    details["message"] = f"{prefix}\n{details['message']}"
    return Found(f"{prefix}\n{found.message}", details, found.flaky)


def repeat_identical(variant: Variant, dims: Mapping[str, Any], seed: int, nodeid: str,
                     calls: int, input_set: str | None = None) -> tuple[int, int, str | None]:
    """(wrong, made, first wrong message) over `calls` identical checked calls; stops after a hang."""
    wrong, first = 0, None
    for made in range(1, calls + 1):
        try:
            checked_call(variant, dims, seed, nodeid, input_set=input_set)
        except (AssertionError, DcuOptError) as exc:
            wrong += 1
            first = first or with_notes(exc)
            if isinstance(exc, KernelTimeout):  # waiting out the timeout again would only repeat it
                return wrong, made, first
    return wrong, calls, first


def hypothesis_search(variant: Variant, settings: CheckSettings, nodeid: str) -> None:
    from hypothesis import HealthCheck, Phase, given
    from hypothesis import settings as hypothesis_settings
    from hypothesis import strategies as st

    assert variant.reference is not None
    dims_st = dims_strategy(variant.reference.dim_ranges, variant.case.dims, variant.reference.relations,
                            drawn_scalars(variant), upper=settings.hypothesis_profile in LONG_PROFILES)
    profile = hypothesis_settings.get_profile(settings.hypothesis_profile)
    phases = [p for p in profile.phases if p is not Phase.explain]  # its line lists point into the harness
    chosen = hypothesis_settings(profile, max_examples=settings.examples or profile.max_examples, deadline=None,
                                 suppress_health_check=list(HealthCheck), phases=phases)

    # Each draw takes one of the input distributions: `inputs` (None) or a declared `input_sets` entry.
    sets_st = st.sampled_from([None, *variant.reference.input_sets])

    @chosen
    @given(dims=dims_st, seed=st.integers(0, 2**31 - 1), input_set=sets_st)
    def correct_for_all_drawn_dims(dims: dict[str, Any], seed: int, input_set: str | None) -> None:
        checked_call(variant, dims, seed, nodeid, input_set=input_set)

    correct_for_all_drawn_dims()


def with_notes(exc: BaseException) -> str:
    """The error text plus the notes Hypothesis attaches (the falsifying example)."""
    notes = [n for n in getattr(exc, "__notes__", []) if n.strip()]
    return "\n".join([str(exc), *notes])


def describe_exception(exc: BaseException) -> str:
    """`with_notes`, plus every sub-exception of an exception group (Hypothesis' FlakyFailure, multiple bugs)."""
    notes = [n for n in getattr(exc, "__notes__", []) if n.strip() and "Traceback (most recent call last)" not in n]
    head = "\n".join([f"{type(exc).__name__}: {exc}", *notes])  # a traceback into the harness helps nobody
    if is_flaky(exc):
        head = ("Hypothesis saw a failure that did not reproduce when the same example ran again (flaky, "
                f"nondeterministic): {head}")
    subs = getattr(exc, "exceptions", None) or ()
    parts = [head] + [textwrap.indent(describe_exception(sub), "  ") for sub in subs]
    return "\n".join(parts)


def is_flaky(exc: BaseException) -> bool:
    from hypothesis.errors import Flaky

    return isinstance(exc, Flaky)
