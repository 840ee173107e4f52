"""The correctness stage: run a branch in its worker, call the reference on the same inputs, compare.

`run_correctness` is what `test_correctness_<toolchain>[<branch>]` does: deterministic boundary dims
first (`compare.boundary_dims`: the defaults, each dim's top, default + 1, just past powers of two, the
bottom), then Hypothesis draws (which also shrink a failure to a minimal example). A failing example
is re-run on identical inputs to tell a wrong kernel from a nondeterministic one, and a branch that
passed is called a few more times at the default dims: a sometimes-wrong kernel is a wrong kernel.
`checked_call` is one call at given dims and seed; hand-written tests reach it through the
`dcuopt_case` fixture.

The float64 reference is computed once per (case, dims, inputs) and shared by every branch and call of the
process (`ReferenceCache`): at real sizes it is the costliest part of a check (an 8192x6144x4096 matmul in
float64 on the host), and every branch, every stability call and every checked timed call asks for the same one.
"""
from __future__ import annotations

import hashlib
import json
import os
import signal
import textwrap
import threading
import time
import warnings
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..case.buffers import decode, is_float, numel, storage_dtype
from ..case.reference import (
    DEFAULT_INPUT_SET,
    REDUCTION_BOUND_FACTOR,
    ROUNDING_UNIT,
    check_relations,
    reduction_bound,
)
from ..errors import (
    CaseError,
    DcuOptError,
    KernelCrashed,
    KernelTimeout,
    TamperedFiles,
    TimedCallsWrong,
    WorkerError,
)
from ..option_declarations import INPUT_SET_OPTION
from ..run.devices import shared_use
from ..timing.bracket import WORK_LEFT_RUNNING
from ..timing.outside_window import WORK_OUTSIDE_WINDOW
from ..toolchains.binding import BindSpec, Snapshot, draw_inputs, draw_key, draw_layout, is_input
from ..toolchains.exchange import (
    ComparedOutputs,
    buffer_digest,
    draw_seed,
    held_inputs,
    outputs_digest,
    run_seed,
)
from ..variant import Variant
from . import reference_device
from .compare import (
    Mismatch,
    boundary_dims,
    compare,
    decode_all,
    dims_strategy,
    never_written_under_nan,
    reproduce_command,
    tolerances,
)

_CRASH_KINDS: dict[type, str] = {KernelCrashed: "crashed", KernelTimeout: "timed out", TamperedFiles: "tampered",
                                 WorkerError: "raised"}

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
        variant.record.correct = True
        return None
    mark_incorrect(variant, found, nodeid, "correctness")
    return found.message


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
        variant.default_verified = variant.default_verified or dict(dims) == dict(variant.case.dims)
        return None
    mark_incorrect(variant, found, nodeid, "before timing")
    return found.message


def check_before_timing(variant: Variant, nodeid: str) -> str | None:
    """Before timing a branch this process has no verdict on (its correctness test was deselected, or ran in
    another xdist worker), run the deterministic boundary dims: a branch wrong there is marked incorrect and
    never timed. The failure message, or None (the verdict stays unset: Hypothesis did not run here)."""
    if variant.record.correct is not None or variant.failed_correctness:
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


def mark_incorrect(variant: Variant, found: Found, nodeid: str, stage: str) -> None:
    """A failure of any kind: the branch is incorrect (so neither timed nor ranked) and its failure is kept.
    `stage` says which check found it (the merge of xdist records prefers the correctness test's, shrunk one)."""
    variant.failed_correctness = True
    variant.record.correct = False
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
        return Found(with_notes(exc), variant.last_failure)
    except Exception as exc:  # Flaky (a failure that did not reproduce), several failures at once
        return Found(describe_exception(exc), variant.last_failure, flaky=is_flaky(exc))
    return boundary or stability_failure(variant, nodeid)


def boundary_failure(variant: Variant, nodeid: str, ran: list[dict[str, Any]] | None = None) -> Found | None:
    """The first failure among the deterministic boundary dims (`compare.boundary_dims`), at seed 0; each
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
            variant.default_verified = True
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
    buffers those calls used (run/worker.py binds once per dims), so a result kept per buffer and size is wrong."""
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


def checked_call(variant: Variant, dims: Mapping[str, Any], seed: int, nodeid: str,
                 reproduce: str | None = None, input_set: str | None = None) -> None:
    """One call at `dims`/`seed` compared with the reference; AssertionError (or a DcuOptError) when wrong.
    `input_set`: the inputs drawn from that ref.py `input_sets` entry (None: from `inputs`); for a case that declares
    input sets the record counts the calls of each (`observations.input_sets`).

    The device's lock is held shared for the call (run/devices.shared_use): under xdist, or beside another session,
    no timing on this device runs while the kernel, its reference or the compare does."""
    assert variant.worker is not None and variant.reference is not None
    if input_set is not None and input_set not in variant.reference.input_sets:
        known = ", ".join(variant.reference.input_sets) or "none"
        raise CaseError(f"{variant.reference.path}: no input set {input_set!r} (declared in `input_sets`: {known}).")
    if reproduce is None and input_set is not None:
        reproduce = reproduce_command(nodeid, dims, seed, extra=(f"{INPUT_SET_OPTION}={input_set}",))
    if variant.reference.input_sets:  # a case with one distribution has nothing to say
        counted = variant.record.observations.setdefault("input_sets", {})
        name = input_set or DEFAULT_INPUT_SET
        counted[name] = counted.get(name, 0) + 1
    with shared_use(variant.worker.lock, f"checked call of {variant.label}"):
        try:
            _checked_call(variant, dims, seed, nodeid, reproduce, input_set)
        except (AssertionError, DcuOptError):
            if input_set is not None and variant.last_failure is not None:
                variant.last_failure["input_set"] = input_set
            raise


def _checked_call(variant: Variant, dims: Mapping[str, Any], seed: int, nodeid: str, reproduce: str | None,
                  input_set: str | None = None) -> None:
    assert variant.worker is not None and variant.reference is not None
    variant.examples += 1
    reproduce = reproduce or reproduce_of(nodeid, dims, seed)
    try:
        check_relations(variant.reference, dims, "dims")  # hand-picked or replayed dims (draws always satisfy them)
        spec = variant.bind_spec(dims, draw_seed(seed), input_set)
    except CaseError as exc:  # broken relations, a derived shape or domain that does not exist at these dims
        variant.last_failure = {"dims": dict(dims), "seed": seed, "message": str(exc), "reproduce": reproduce}
        variant.record.error = {"kind": "case error", "message": str(exc)}
        raise
    shapes = spec.shapes
    try:
        snapshot = run_call(variant, spec)
    except (KernelCrashed, KernelTimeout, WorkerError) as exc:
        message = f"{exc}\ndims={dict(dims)} seed={seed}"
        variant.last_failure = {"dims": dict(dims), "seed": seed, "message": message, "reproduce": reproduce}
        kind = next(word for cls, word in _CRASH_KINDS.items() if isinstance(exc, cls))
        variant.record.error = {"kind": f"kernel {kind}", "message": str(exc)}
        raise
    try:
        mismatches = output_mismatches(variant, snapshot, dims, shapes)
    except CaseError as exc:
        variant.last_failure = {"dims": dict(dims), "seed": seed, "message": str(exc), "reproduce": reproduce}
        variant.record.error = {"kind": "case error", "message": str(exc)}
        raise
    if mismatches or snapshot.problems:
        drawn = f" input set {input_set!r}" if input_set is not None else ""
        lines = [f"{variant.label} is wrong for dims={json.dumps(dict(dims))} seed={seed}{drawn}:"]
        lines += [f"  kernel {p}" for p in snapshot.problems]
        lines += [m.describe() for m in mismatches]
        lines += [hint for m in mismatches if (hint := read_before_write_hint(m, variant.reference.inputs))]
        if variant.params and (binding := variant.record.observations.get("binding")):
            lines.append(f"  (solve's parameters were bound by position: {binding['map']})")
        lines.append(f"reproduce: {reproduce}")
        message = "\n".join(lines)
        variant.last_failure = {"dims": dict(dims), "seed": seed, "message": message, "reproduce": reproduce,
                                "mismatches": [m.to_json() for m in mismatches], "problems": snapshot.problems}
        raise AssertionError(message)


def reproduce_of(nodeid: str, dims: Mapping[str, Any], seed: int) -> str:
    """The command that re-runs one example: its dims and seed, and this run's seed (the inputs depend on both)."""
    return reproduce_command(nodeid, dims, seed, extra=(f"{RUN_SEED_OPTION}={run_seed()}",))


RUN_SEED_OPTION = "--dcuopt-run-seed"


def run_call(variant: Variant, spec: BindSpec) -> Snapshot:
    """One call in the branch's worker on the inputs of `spec`, which this process computes itself and hands to the
    worker unless it holds them already; the snapshot comes back with those inputs in place of anything the worker
    said about them."""
    assert variant.worker is not None
    inputs = spec_inputs(variant, spec)
    snapshot: Snapshot = variant.worker.request("run", spec=handed(variant, spec, inputs))
    return with_inputs(variant, snapshot, spec, inputs)


def handed(variant: Variant, spec: BindSpec, inputs: Mapping[str, np.ndarray]) -> BindSpec:
    """`spec` with `inputs` to hand to the worker, unless its buffers at these dims were last given these inputs
    (`variant.bound`: the last draw key asked per dims). Only saves work: the worker's buffers are never trusted."""
    key = draw_key(variant.params, spec) if variant.params else None
    if key is None or key in variant.bound:
        return spec
    variant.bound.difference_update({bound for bound in variant.bound if bound[1] == key[1]})
    variant.bound.add(key)
    return replace(spec, provided=inputs)


def spec_inputs(variant: Variant, spec: BindSpec) -> dict[str, np.ndarray]:
    """The starting values of every input of a call of `spec`, as this process draws them (kept: every branch at
    these dims and seed shares them); {} for a toolchain without a C signature (its binding makes its own)."""
    if not variant.params:
        return {}
    return held_inputs().get(draw_key(variant.params, spec), lambda: draw_inputs(variant.params, spec))


def with_inputs(variant: Variant, snapshot: Snapshot, spec: BindSpec, inputs: Mapping[str, np.ndarray]) -> Snapshot:
    """`snapshot` with the inputs this process holds for the call (pointer inputs from `inputs`, scalars from the
    dims; whatever the worker sent under those names is dropped), and every output it expects checked to be there in
    its storage type and size: a missing or misshapen one is a problem of the call, never a pass. A toolchain without
    a C signature gets its inputs from `layout_inputs`."""
    if not variant.params:
        return with_layout_inputs(variant, snapshot, spec)
    held = held_inputs()
    sent = snapshot.outputs
    snapshot.inputs, snapshot.input_digests, snapshot.outputs = {}, {}, {}
    for param in variant.params:
        snapshot.dtypes[param.name] = param.dtype
        if not param.pointer:
            if param.name in spec.dims:
                snapshot.inputs[param.name] = np.asarray(spec.dims[param.name])
            continue
        if is_input(param, spec):
            snapshot.inputs[param.name] = inputs[param.name]
            snapshot.input_digests[param.name] = held.digest(param.name, param.dtype, inputs[param.name])
        if param.const:
            continue
        problem = _output_problem(param.name, sent.get(param.name), storage_dtype(param.dtype),
                                  numel(spec.shapes[param.name]))
        if problem is not None:
            snapshot.problems.append(problem)
            snapshot.incomplete = True
        else:
            snapshot.outputs[param.name] = sent[param.name]
    return snapshot


def _output_problem(name: str, array: Any, dtype: np.dtype[Any], count: int) -> str | None:
    if not isinstance(array, np.ndarray):
        return f"sent no output {name!r} back (the worker's reply is not believed: every output is compared)"
    if array.dtype != dtype or array.size != count:
        return (f"sent output {name!r} as {array.size} elements of {array.dtype}, not the {count} elements of {dtype} "
                "it has")
    return None


def with_layout_inputs(variant: Variant, snapshot: Snapshot, spec: BindSpec) -> Snapshot:
    """For a binding that lays out its own buffers (the python toolchain's setup()): the inputs drawn here from the
    layout the worker reported (`Snapshot.layout`) and the seed this process chose; scalars named in the dims from the
    dims. The values the worker drew are dropped: a kernel that changed them only makes its outputs wrong."""
    for name, value in layout_inputs(variant, snapshot.layout, spec).items():
        snapshot.inputs[name] = value
    for name in list(snapshot.inputs):
        if name in spec.dims:
            snapshot.inputs[name] = np.asarray(spec.dims[name])
    absent = [name for name in _reference_parameters(variant)
              if name not in snapshot.inputs and name not in snapshot.outputs and name not in spec.dims]
    if absent or not snapshot.outputs:
        snapshot.incomplete = True
        snapshot.problems.append(f"sent back no value for {absent or 'any output'} (the reference takes "
                                 f"{_reference_parameters(variant)}): the worker's reply is not believed, every "
                                 "parameter of the reference is an input drawn here or an output compared here")
    return snapshot


def _reference_parameters(variant: Variant) -> list[str]:
    import inspect

    assert variant.reference is not None
    return [p.name for p in inspect.signature(variant.reference.function).parameters.values()
            if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]


def layout_inputs(variant: Variant, layout: Mapping[str, tuple[str, tuple[int, ...]]],
                  spec: BindSpec) -> dict[str, np.ndarray]:
    """The inputs of a laid-out binding, drawn here (`binding.draw_layout`), kept like every input this process
    draws."""
    key = ("layout", tuple(sorted((name, dtype, tuple(shape)) for name, (dtype, shape) in layout.items())),
           spec.seed, tuple(sorted(spec.domains.items())))
    return held_inputs().get(key, lambda: draw_layout(layout, spec.seed, spec.domains))


def reject_work_left_running(variant: Variant, extra: Mapping[str, Any]) -> None:
    """A device timing whose calls left work running after their end event (`timing.bracket`): its samples time the
    launch, not the work. The branch is marked (never ranked, never champion) and TimedCallsWrong is raised."""
    reject_work_outside_window(variant, extra)
    found = extra.get("after_end_event") or {}
    if found.get("verdict") != WORK_LEFT_RUNNING:
        return
    message = (f"{variant.label}: work left running after its calls returned. Once each call's end event had "
               f"completed, a device-wide synchronize still waited {found.get('waits_us')} us (with no call: "
               f"{found.get('idle_us')} us). solve() launches work on a stream the timing events do not see (e.g. one "
               "made with cudaStreamNonBlocking) and returns, so the samples time the launch, not the work: the "
               "branch is not ranked. Launch on the default stream, or wait for your stream "
               "(cudaStreamSynchronize) before solve() returns.")
    variant.record.error = {"kind": WORK_LEFT_RUNNING, "message": message, "after_end_event": dict(found)}
    variant.record.correct = False
    variant.failed_correctness = True
    raise TimedCallsWrong(message)


def reject_work_outside_window(variant: Variant, extra: Mapping[str, Any]) -> None:
    """A device timing whose calls ran device work outside their samples' windows (`timing.outside_window`): the
    samples time something else than the work. Marked and raised like work left running."""
    found = extra.get("outside_window") or {}
    if found.get("verdict") != WORK_OUTSIDE_WINDOW:
        return
    names = sorted({str(name) for name, _ in found.get("outside_activities") or []})
    message = (f"{variant.label}: device work outside the timed window. In profiled cold samples queued as measured, "
               f"{found.get('outside_us')} us of the call's device activity per sample ({', '.join(names[:4])}) ran "
               f"before the sample's start event or after its end event (windows {found.get('windows_us')} us): a "
               "stream that does not wait for the timed one runs during the delay kernel that hides the launch, or "
               "work is launched from another thread or left behind after solve() returns. The samples do not time "
               "the work: the branch is not ranked. Launch on the stream solve() is called on (the default stream), "
               "or make your streams wait for it (cudaStreamWaitEvent) and join them before solve() returns.")
    variant.record.error = {"kind": WORK_OUTSIDE_WINDOW, "message": message, "outside_window": dict(found)}
    variant.record.correct = False
    variant.failed_correctness = True
    raise TimedCallsWrong(message)


def output_mismatches(variant: Variant, snapshot: Snapshot, dims: Mapping[str, Any],
                      shapes: Mapping[str, tuple[int, ...]]) -> list[Mismatch]:
    """Every output of one call compared with the reference at `dims`: the declared tolerances evaluated at these
    dims, and for a declared float reduction its error bound (see `reduction_allowance`)."""
    assert variant.reference is not None
    if snapshot.incomplete:  # its problems fail the call: there is nothing whole to compare
        return []
    cache = shared_reference_cache()
    compared = None
    if cache.max_bytes > 0 and not snapshot.problems:
        compared = (case_key(variant), inputs_key(variant, snapshot, dims, shapes),
                    outputs_digest(snapshot.outputs, snapshot.dtypes))
        if cache.compared.seen(*compared):  # these bytes, from these inputs, already matched
            return []
    expected = reference_outputs(variant, snapshot, dims, shapes)
    declared_atol, declared_rtol = variant.reference.tolerances_at(dims)
    magnitudes: dict[str, np.ndarray] | None = None
    found = []
    for name, kernel_out in snapshot.outputs.items():
        dtype = snapshot.dtypes[name]
        arithmetic = variant.reference.arithmetic(dtype)
        atol, rtol = tolerances(dtype, declared_atol, declared_rtol, arithmetic)
        bound, rule = None, ""
        length = variant.reference.reduction_length(dims)
        if length is not None and is_float(dtype):
            rtol = variant.reference.scaled_rtol(rtol, dims)
            if variant.reference.uses_magnitude_bound(dtype):
                magnitudes = magnitudes or reference_outputs(variant, snapshot, dims, shapes, absolute=True)
                bound = reduction_bound(length, arithmetic, np.abs(magnitudes[name]), expected[name])
                rule = (f"{REDUCTION_BOUND_FACTOR:g}*{ROUNDING_UNIT[arithmetic]:.3g}*(|reference on |inputs|| + "
                        f"sqrt({length})*|reference|)  (float reduction of length {variant.reference.reduction} = "
                        f"{length}, {arithmetic} arithmetic)")
        # compare() converts chunk by chunk to float64, which is what decoding does for every storage type but
        # bfloat16's: no whole-output float64 copy (256 MB for 32M elements) for the others
        values = kernel_out if dtype != "bfloat16" else decode_all({name: kernel_out}, snapshot.dtypes)[name]
        shape = shapes.get(name) or kernel_out.shape
        mismatch = compare(name, values, expected[name], dtype, shape, atol, rtol, bound=bound, bound_rule=rule) or \
            never_written_under_nan(name, kernel_out, expected[name], dtype, shape, atol, rtol)
        if mismatch is not None:
            found.append(mismatch)
    if not found and compared is not None:
        cache.compared.add(*compared)
    return found


def inputs_key(variant: Variant, snapshot: Snapshot, dims: Mapping[str, Any],
               shapes: Mapping[str, tuple[int, ...]]) -> str:
    """The inputs of a call, for `ComparedOutputs`: the reference's key without the case (kept per case)."""
    return hashlib.sha256(repr(reference_key(variant, snapshot, dims, shapes, False)[2:]).encode()).hexdigest()[:32]


def case_key(variant: Variant) -> str:
    """What a verified call's token is kept under: the case's ref.py as it is now (its tolerances and reference)."""
    assert variant.reference is not None
    path = variant.reference.path.resolve()
    return f"{path}:{path.stat().st_mtime_ns}"


def reference_outputs(variant: Variant, snapshot: Snapshot, dims: Mapping[str, Any],
                      shapes: Mapping[str, tuple[int, ...]], absolute: bool = False) -> dict[str, np.ndarray]:
    """Call the reference on the values the kernel saw (in/out buffers: their values *before* the call); once per
    (case, dims, inputs) in this process (`shared_reference_cache`). The arrays are read-only.

    `absolute`: on the absolute values of the float inputs and float scalars instead (integers as they are): for a
    reference linear in each input this gives sum |a_i * b_i| per output, the scale of a float reduction's error.
    """
    cache = shared_reference_cache()
    key = reference_key(variant, snapshot, dims, shapes, absolute) if cache.max_bytes > 0 else None
    found = cache.get(key) if key is not None else None
    if found is not None:
        return found
    started = time.perf_counter()
    outputs = _call_reference(variant, snapshot, dims, shapes, absolute)
    for array in outputs.values():
        array.flags.writeable = False  # shared by every caller: nobody may change it
    seconds = time.perf_counter() - started
    _REFERENCE_CLOCK.seconds = reference_seconds() + seconds
    if key is not None:
        cache.put(key, outputs, seconds)
    return dict(outputs)


class _ReferenceClock(threading.local):
    seconds = 0.0


_REFERENCE_CLOCK = _ReferenceClock()


def reference_seconds() -> float:
    """Seconds this thread has spent computing references (inputs decoded, the reference run, wherever it ran):
    a timing record splits its harness time's `compare` phase with it."""
    return _REFERENCE_CLOCK.seconds


def _call_reference(variant: Variant, snapshot: Snapshot, dims: Mapping[str, Any],
                    shapes: Mapping[str, tuple[int, ...]], absolute: bool) -> dict[str, np.ndarray]:
    names = _reference_names(variant, snapshot)
    nbytes = sum(8 * stored.size for stored in (_stored(snapshot, name) for name in names) if stored.ndim)  # float64
    where = reference_device.placement(variant, nbytes)
    if where.device is not None:
        try:
            with reference_device.exclusive(variant, where):
                started = time.perf_counter()
                device = where.device
                try:
                    on_device = _reference_kwargs(variant, snapshot, names, shapes, absolute, device)
                    outputs = _run_reference(variant, on_device, dims, snapshot, lambda: _reference_kwargs(
                        variant, snapshot, names, shapes, absolute, device))
                finally:
                    on_device = {}
                    reference_device.release_memory(where)
                seconds = time.perf_counter() - started
            _note_placement(variant, where, nbytes, seconds)
            return outputs
        except Exception as exc:  # run again on the host, and say so in the record
            where = reference_device.Placement(None, f"the reference raised {type(exc).__name__} on {where.device} "
                                                     f"({str(exc)[:200]}); computed on the host instead")
            variant.record.observations["reference_device"] = where.to_json()
            return _run_reference(variant, _reference_kwargs(variant, snapshot, names, shapes, absolute), dims,
                                  snapshot, lambda: _reference_kwargs(variant, snapshot, names, shapes, absolute))
    started = time.perf_counter()
    outputs = _run_reference(variant, _reference_kwargs(variant, snapshot, names, shapes, absolute), dims, snapshot,
                             lambda: _reference_kwargs(variant, snapshot, names, shapes, absolute))
    _note_placement(variant, where, nbytes, time.perf_counter() - started)
    return outputs


def _reference_names(variant: Variant, snapshot: Snapshot) -> list[str]:
    return list(dict.fromkeys([p.name for p in variant.params] or list(snapshot.inputs) + list(snapshot.outputs)))


def _stored(snapshot: Snapshot, name: str) -> np.ndarray:
    """What the reference starts `name` from: a pure output's stored array stands for its shape only."""
    return snapshot.inputs[name] if name in snapshot.inputs else snapshot.outputs[name]


# Storage types a GPU converts to float64/int64 exactly as `decode` does on the host (bfloat16 and the unsigned
# 32/64-bit types are decoded on the host, then sent).
_DEVICE_DECODES = {"float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"}


def _reference_kwargs(variant: Variant, snapshot: Snapshot, names: list[str], shapes: Mapping[str, tuple[int, ...]],
                      absolute: bool, device: str | None = None) -> dict[str, Any]:
    """The reference's keyword arguments: float64/int64 tensors (scalars as Python numbers), on `device` or the host.

    An in/out buffer appears in both the inputs and the outputs: the reference starts from what the kernel started
    from. Pure outputs start as zeros. On a GPU the inputs go as stored (float32: half the bytes of float64) and are
    converted there; on the host, read-only inputs are decoded into reused scratch memory (`_DECODED`).
    `absolute`: the absolute values of the float arrays (see `reference_outputs`).
    """
    import torch

    assert variant.reference is not None
    declared = variant.reference.shapes is not None
    kwargs: dict[str, Any] = {}
    for name in names:
        dtype, stored = snapshot.dtypes[name], _stored(snapshot, name)
        if stored.ndim == 0:
            value = decode(stored, dtype)
            kwargs[name] = (np.abs(value) if absolute and is_float(dtype) else value).item()
            continue
        shape = shapes.get(name, stored.shape) if declared or not shapes else (stored.size,)
        wanted = torch.float64 if is_float(dtype) else torch.int64
        if name not in snapshot.inputs:
            # On the host np.zeros: pages the reference does not write are never touched (torch.zeros writes them).
            kwargs[name] = (torch.zeros(shape, dtype=wanted, device=device) if device is not None else
                            torch.from_numpy(np.zeros(shape, np.float64 if is_float(dtype) else np.int64)))
            continue
        if device is not None:
            kwargs[name] = _on_device(stored, dtype, wanted, device).reshape(shape)
        else:
            in_place = name in snapshot.outputs  # in/out: it becomes the cached output, so a fresh array
            array = decode(stored, dtype) if in_place else _DECODED.into(name, stored, dtype)
            kwargs[name] = torch.from_numpy(np.ascontiguousarray(array).reshape(shape))
        if absolute and is_float(dtype):
            kwargs[name].abs_()  # every tensor here is this call's own (fresh, on the device, or the scratch)
    return kwargs


def _on_device(stored: np.ndarray, dtype: str, wanted: Any, device: str) -> Any:
    import torch

    host = stored if dtype in _DEVICE_DECODES else decode(stored, dtype)
    with warnings.catch_warnings():  # read-only arrays (the shared input store): only read here, copied to the device
        warnings.simplefilter("ignore", UserWarning)
        raw = torch.from_numpy(np.ascontiguousarray(host).reshape(-1))
    converted = raw.to(device).to(wanted)
    # A device that is the host (torch's CPU device, for the tests) hands back `raw` itself for a float64 input:
    # the caller may write into the result (`abs_`), never into the snapshot's input.
    return converted.clone() if converted.data_ptr() == raw.data_ptr() else converted


class _DecodedInputs(threading.local):
    """Float64/int64 copies of the reference's read-only inputs, in memory reused from one reference to the next.

    At real sizes the reference's inputs are hundreds of MB in float64, and a fresh array's first touch costs more
    than the conversion (1.3 s of a 2.2 s first-branch check at 32M elements on a VM). The reference only reads
    them, and nothing keeps them after the call (its outputs are other arrays), so each input name keeps one flat
    array per type, as large as the largest call needed, and every call gets a view of its front in its own shape:
    Hypothesis examples of changing shapes touch no fresh pages once the largest was seen. Within `max_bytes` in all
    (least recently used out). One per thread: never shared.
    """

    max_bytes = 2048 << 20

    def __init__(self) -> None:
        self.arrays: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()

    def into(self, name: str, stored: np.ndarray, dtype: str) -> np.ndarray:
        wanted = np.dtype(np.float64 if is_float(dtype) else np.int64)
        key = (name, wanted.str)
        kept = self.arrays.pop(key, None)
        if kept is None or kept.size < stored.size:
            kept = np.empty(stored.size, wanted)  # grows: the larger array replaces the smaller one
        if kept.nbytes <= self.max_bytes:  # one larger than the whole bound is used once and freed
            self.arrays[key] = kept
            while sum(array.nbytes for array in self.arrays.values()) > self.max_bytes:
                self.arrays.popitem(last=False)
        array = kept[:stored.size].reshape(stored.shape)
        if dtype == "bfloat16":
            array[...] = decode(stored, dtype)
        else:
            np.copyto(array, stored, casting="unsafe")  # what `decode` computes, into existing memory
        return array


_DECODED = _DecodedInputs()


def _run_reference(variant: Variant, kwargs: dict[str, Any], dims: Mapping[str, Any], snapshot: Snapshot,
                   again: Callable[[], dict[str, Any]]) -> dict[str, np.ndarray]:
    """Call the reference on `kwargs` (tensors on the host or a GPU); its outputs as host float64/int64 arrays.

    A pure output the reference leaves all zeros (the value it is given) may be its result, or a reference that
    rebinds the name (`y = 2 * x`) and writes nothing: then it is called once more on fresh arguments (`again`)
    with those outputs starting at `REFERENCE_SENTINEL`; one still holding it everywhere was never written."""
    assert variant.reference is not None
    returned = _call(variant, kwargs, dims)
    pure = [name for name in snapshot.outputs if name not in snapshot.inputs]
    untouched = [name for name in pure if not bool(kwargs[name].any())]
    if returned is not None and pure and untouched == pure:
        raise CaseError(f"{variant.reference.path}: reference(**kwargs) returned a value ({type(returned).__name__}) "
                        f"and wrote nothing into its outputs {pure} (they still hold the zeros they were given). The "
                        "harness reads the outputs the reference writes in place: write them (e.g. `y.copy_(...)` or "
                        "`y[:] = ...`) instead of returning the result.")
    key = case_key(variant)
    _WRITES_IN_PLACE.update((key, name) for name in pure if name not in untouched)
    # Once the reference was seen writing an output, zeros left there at other dims are its result (a write under
    # a mask that is empty there, into the zeros it was given): only an output never seen written is checked.
    suspects = [name for name in untouched if (key, name) not in _WRITES_IN_PLACE]
    if suspects:
        _check_written(variant, again(), suspects, dims)
    return {name: kwargs[name].detach().cpu().numpy().astype(np.float64 if is_float(snapshot.dtypes[name])
                                                              else np.int64, copy=False).ravel()
            for name in snapshot.outputs}


# (case_key, output) for the outputs each case's reference was seen writing in place in this process.
_WRITES_IN_PLACE: set[tuple[str, str]] = set()
# What a pure output starts as in the second call of a reference that left it all zeros: a value a result is unlikely
# to hold everywhere (exact in float64 and int64).
REFERENCE_SENTINEL = -1234.5


def _check_written(variant: Variant, kwargs: dict[str, Any], names: list[str], dims: Mapping[str, Any]) -> None:
    """CaseError naming the outputs in `names` that the reference leaves as they start, from zeros and from
    `REFERENCE_SENTINEL` alike: it wrote nothing to them."""
    assert variant.reference is not None
    starts = {name: REFERENCE_SENTINEL if kwargs[name].is_floating_point() else int(REFERENCE_SENTINEL)
              for name in names}
    for name, start in starts.items():
        kwargs[name].fill_(start)
    _call(variant, kwargs, dims)
    unwritten = [name for name, start in starts.items() if bool((kwargs[name] == start).all())]
    if unwritten:
        name = unwritten[0]
        raise CaseError(f"{variant.reference.path}: reference wrote nothing to `{name}`: it still held the value it "
                        f"was given after the call (all zeros, and all {starts[name]} when called again), so "
                        f"the kernel would be compared with that. `{name} = ...` rebinds the name and leaves the "
                        f"harness's buffer as it was: write in place (`{name}.copy_(...)` or `{name}[:] = ...`)"
                        + (f"; also unwritten: {unwritten[1:]}" if unwritten[1:] else "") + ".")


def _note_placement(variant: Variant, where: reference_device.Placement, nbytes: int, seconds: float) -> None:
    """The record says where the branch's largest reference ran, why, and what it took (transfers to and from the
    device included); small ones always run on the host and are not noted under `auto`."""
    noted = variant.record.observations.get("reference_device")
    if noted is not None and noted.get("bytes", 0) > nbytes:
        return  # the largest reference of the branch is the one worth stating (the boundary examples are small)
    if where.device is not None or nbytes >= reference_device.GPU_REFERENCE_MIN_BYTES or \
            reference_device.mode() != "auto":
        variant.record.observations["reference_device"] = {**where.to_json(), "seconds": round(seconds, 4),
                                                           "bytes": nbytes}


def _call(variant: Variant, kwargs: dict[str, Any], dims: Mapping[str, Any]) -> Any:
    assert variant.reference is not None
    limit = variant.worker.timeout_s if variant.worker is not None else None
    overtime_key = (case_key(variant), repr(sorted(dims.items())))
    if overtime_key in _OVERTIME:  # every branch of the case would wait the whole timeout again
        raise CaseError(_OVERTIME[overtime_key] + " (It was not run again at these dims.)")
    try:
        with reference_deadline(limit, variant.record.observations):
            return variant.reference.function(**kwargs)
    except ReferenceOvertime:
        message = (f"{variant.reference.path}: reference(**kwargs) did not return within {limit:g} s "
                   f"(--dcuopt-timeout) at dims {dict(dims)}; it was interrupted, and the branch is not judged. Look "
                   "for a loop that never ends or a wait in the reference; make it faster (whole-tensor torch "
                   "operations, not Python loops over elements), lower the sizes, or raise --dcuopt-timeout if it is "
                   "just slow.")
        _OVERTIME[overtime_key] = message
        raise CaseError(message) from None
    except Exception as exc:
        raise CaseError(f"{variant.reference.path}: reference(**kwargs) raised {type(exc).__name__}: {exc} "
                        f"(kwargs: {sorted(kwargs)}, dims {dict(dims)}). It must accept the kernel's parameter "
                        "names and write outputs in place.") from exc


# (case_key, dims) -> the message, for references that outlived the timeout in this process.
_OVERTIME: dict[tuple[str, str], str] = {}


class ReferenceOvertime(BaseException):
    """Raised inside a reference that outlived --dcuopt-timeout (a BaseException, so that a reference's own
    `except Exception` does not swallow it)."""


@contextmanager
def reference_deadline(limit_s: float | None, observations: dict[str, Any]) -> Iterator[None]:
    """Interrupt the reference with ReferenceOvertime once `limit_s` has passed.

    The reference runs in the pytest process, where a thread cannot be stopped from outside: a SIGALRM timer
    (`setitimer`) makes the main thread raise at the next bytecode, and wakes a sleep or a wait. A single C-level
    call (one huge torch operation) is only interrupted when it returns. Off the main thread, or with another
    SIGALRM timer running (pytest-timeout's), no bound can be placed: the record says so (`reference_timeout`)."""
    if not limit_s or limit_s <= 0:
        yield
        return
    why = None
    if threading.current_thread() is not threading.main_thread():
        why = "the reference ran off the main thread, where no signal can interrupt it"
    elif not hasattr(signal, "setitimer"):
        why = "this platform has no interval timer (setitimer)"
    elif signal.getitimer(signal.ITIMER_REAL) != (0.0, 0.0):
        why = "another SIGALRM timer was running (e.g. pytest-timeout's)"
    if why is not None:
        observations["reference_timeout"] = f"not bounded: {why}"
        yield
        return

    def overtime(number: int, frame: Any) -> None:
        raise ReferenceOvertime()

    previous = signal.signal(signal.SIGALRM, overtime)
    try:
        signal.setitimer(signal.ITIMER_REAL, limit_s)
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous if previous is not None else signal.SIG_DFL)


def reference_key(variant: Variant, snapshot: Snapshot, dims: Mapping[str, Any],
                  shapes: Mapping[str, tuple[int, ...]], absolute: bool) -> tuple[Hashable, ...]:
    """Everything the reference's outputs depend on: the ref.py (path and modification time), the dims, the
    buffers' shapes and names, and the content of every input (in/out buffers' starting values and scalars
    included). The seed is covered by the inputs' content: it only draws them."""
    assert variant.reference is not None
    digest = hashlib.blake2b(digest_size=16)
    for name in sorted(snapshot.inputs):
        # the digest this process computed for an input it holds (the same function: equal keys either way)
        named = snapshot.input_digests.get(name) or buffer_digest(name, snapshot.dtypes[name], snapshot.inputs[name])
        digest.update(f"{name}={named};".encode())
    path = variant.reference.path
    outputs = tuple((name, snapshot.dtypes[name], snapshot.outputs[name].shape) for name in sorted(snapshot.outputs))
    return (str(path.resolve()), path.stat().st_mtime_ns, tuple(sorted((k, repr(v)) for k, v in dims.items())),
            tuple(sorted((k, tuple(v)) for k, v in shapes.items())), tuple(p.name for p in variant.params),
            variant.reference.shapes is not None, outputs, absolute, digest.hexdigest())


REFERENCE_CACHE_ENV = "DCUOPT_REFERENCE_CACHE_MB"  # 0 turns the cache off
DEFAULT_REFERENCE_CACHE_MB = 1024
REFERENCE_CACHE_ENTRIES = 32
# Only references that took this long are kept: cheap ones (Hypothesis' small draws) are recomputed, so a stream of
# them cannot push the costly default-dims reference out.
REFERENCE_CACHE_MIN_S = 0.002


@dataclass
class _Cached:
    outputs: dict[str, np.ndarray]
    seconds: float  # what computing it cost
    priority: float  # GreedyDual: the cache's age when last used + `seconds`
    used: int  # when last used (ties go least recently used first)

    @property
    def nbytes(self) -> int:
        return sum(array.nbytes for array in self.outputs.values())


class ReferenceCache:
    """Reference outputs by `reference_key`, within `max_entries` and `max_bytes`; a result larger than
    `max_bytes`, or computed in under `min_seconds`, is not kept.

    Eviction is cost-aware least-recently-used (GreedyDual): the entry with the lowest priority goes first, where
    priority = the cache's age at its last use + what computing it cost, and the age rises to each evicted entry's
    priority. So the costly default-dims reference, used by every branch, outlives the boundary examples between its
    uses (each branch checks ~20 of them at dims near the defaults), while an entry nobody asks for again ages out;
    among equally costly entries the least recently used goes first.
    """

    def __init__(self, max_bytes: int, max_entries: int = REFERENCE_CACHE_ENTRIES,
                 min_seconds: float = REFERENCE_CACHE_MIN_S) -> None:
        self.max_bytes, self.max_entries, self.min_seconds = max_bytes, max_entries, min_seconds
        self._entries: dict[Hashable, _Cached] = {}
        self._bytes = 0
        self._age = 0.0
        self._uses = 0
        self._lock = threading.Lock()
        self.hits = self.misses = 0
        # Calls whose outputs matched (toolchains/exchange.py): bit-identical outputs are not compared again.
        self.compared = ComparedOutputs()

    @property
    def nbytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Hashable) -> dict[str, np.ndarray] | None:
        with self._lock:
            found = self._entries.get(key)
            if found is None:
                self.misses += 1
                return None
            self._uses += 1
            found.priority, found.used = self._age + found.seconds, self._uses
            self.hits += 1
            return dict(found.outputs)

    def put(self, key: Hashable, outputs: dict[str, np.ndarray], seconds: float) -> None:
        entry = _Cached(dict(outputs), seconds, 0.0, 0)
        if seconds < self.min_seconds or entry.nbytes > self.max_bytes:
            return
        with self._lock:
            if key in self._entries:
                return
            self._uses += 1
            entry.priority, entry.used = self._age + seconds, self._uses
            self._entries[key] = entry
            self._bytes += entry.nbytes
            while len(self._entries) > self.max_entries or self._bytes > self.max_bytes:
                victim = min(self._entries, key=lambda k: (self._entries[k].priority, self._entries[k].used))
                dropped = self._entries.pop(victim)
                self._age = max(self._age, dropped.priority)
                self._bytes -= dropped.nbytes


_SHARED: list[ReferenceCache] = []


def shared_reference_cache() -> ReferenceCache:
    """The process's reference cache, sized by $DCUOPT_REFERENCE_CACHE_MB (default 1024; 0 turns it off)."""
    if not _SHARED:
        _SHARED.append(ReferenceCache(reference_cache_bytes(os.environ)))
    return _SHARED[0]


def reference_cache_bytes(environ: Mapping[str, str]) -> int:
    text = environ.get(REFERENCE_CACHE_ENV, "").strip()
    if not text:
        return DEFAULT_REFERENCE_CACHE_MB * 2**20
    try:
        megabytes = float(text)
    except ValueError:
        megabytes = -1.0
    if megabytes < 0:
        raise CaseError(f"${REFERENCE_CACHE_ENV}={text!r} is not a size: give megabytes of reference outputs to keep "
                        f"(default {DEFAULT_REFERENCE_CACHE_MB}), or 0 to compute the reference on every call")
    return int(megabytes * 2**20)


def read_before_write_hint(mismatch: Mismatch, declared_inputs: Mapping[str, Any]) -> str | None:
    """For a pure output (not in ref.py `inputs`, so it starts as NaN poison) that came out NaN: the likely fix."""
    name = mismatch.output
    if mismatch.unwritten == 0 or name in declared_inputs:
        return None
    return (f"`{name}` came out NaN/unwritten in {mismatch.unwritten} of {mismatch.total} elements: if solve "
            f"accumulates into `{name}` (`+=`, atomics) from a caller-zeroed buffer, declare ref.py "
            f"initial = {{{name!r}: 'zeros'}}; if it updates `{name}` in place from data, declare it in ref.py "
            "`inputs` (it then starts with drawn values); otherwise those elements are never written.")


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
