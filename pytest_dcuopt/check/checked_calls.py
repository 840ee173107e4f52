"""The pytest process's decision on a call: from the bytes it holds and the inputs it drew, never from what the
worker says about them.

`checked_call` is one call at given dims and seed compared with the reference (the correctness flow's unit, and
what the `dcuopt_case` fixture calls); `check_timing_reply` checks the checked calls among a timing request's timed
ones, and whether they left work running (`TIMING_REPLY_CHECK` is how the stage hands it to bench/). Both put the
inputs this process drew in place of anything the worker sent under their names, and require every output the call has.
"""
from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..call_inputs import handed, spec_inputs
from ..case.buffers import is_float, numel, storage_dtype
from ..case.ref_loader import DEFAULT_INPUT_SET
from ..case.reference import REDUCTION_BOUND_FACTOR, ROUNDING_UNIT, check_relations, reduction_bound
from ..errors import CaseError, DcuOptError, KernelCrashed, KernelTimeout, TamperedFiles, TimedCallsWrong, WorkerError
from ..option_declarations import INPUT_SET_OPTION
from ..run.devices import shared_use
from ..run.protocol import CheckPlan
from ..timing.bracket import WORK_LEFT_RUNNING
from ..timing.outside_window import WORK_OUTSIDE_WINDOW
from ..toolchains.binding import (
    BindSpec,
    Snapshot,
    draw_key,
    draw_layout,
    is_input,
    redrawn_inputs,
    roll_offsets,
    rolled,
)
from ..toolchains.exchange import draw_seed, held_inputs, outputs_digest, run_seed
from ..variant import Variant
from . import reference_cache
from .compare import Mismatch, compare, decode_all, never_written_under_nan, reproduce_command, tolerances
from .reference_cache import reference_key
from .reference_outputs import case_key, reference_outputs, reference_seconds
from .verdicts import found_incorrect

_CRASH_KINDS: dict[type, str] = {KernelCrashed: "crashed", KernelTimeout: "timed out", TamperedFiles: "tampered",
                                 WorkerError: "raised"}


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


def reject_work_outside_window(variant: Variant, extra: Mapping[str, Any]) -> None:
    """A device timing whose calls ran device work outside their samples' windows (`timing.outside_window`): the
    samples time something else than the work. Marked and raised like work left running (`_not_ranked`)."""
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
    _not_ranked(variant, WORK_OUTSIDE_WINDOW, message, {"outside_window": dict(found)})


def reject_work_left_running(variant: Variant, extra: Mapping[str, Any]) -> None:
    """A device timing whose calls left work running after their end event (`timing.bracket`): its samples time the
    launch, not the work. The branch is marked (never ranked, never champion) and TimedCallsWrong is raised."""
    found = extra.get("after_end_event") or {}
    if found.get("verdict") != WORK_LEFT_RUNNING:
        return
    message = (f"{variant.label}: work left running after its calls returned. Once each call's end event had "
               f"completed, a device-wide synchronize still waited {found.get('waits_us')} us (with no call: "
               f"{found.get('idle_us')} us). solve() launches work on a stream the timing events do not see (e.g. one "
               "made with cudaStreamNonBlocking) and returns, so the samples time the launch, not the work: the "
               "branch is not ranked. Launch on the default stream, or wait for your stream "
               "(cudaStreamSynchronize) before solve() returns.")
    _not_ranked(variant, WORK_LEFT_RUNNING, message, {"after_end_event": dict(found)})


def _not_ranked(variant: Variant, kind: str, message: str, found: dict[str, Any]) -> None:
    """Mark a branch whose samples do not time its work (incorrect: never ranked, never champion) and raise."""
    variant.record.error = {"kind": kind, "message": message, **found}
    found_incorrect(variant)
    raise TimedCallsWrong(message)


@dataclass(frozen=True)
class TimingReplyChecked:
    """What checking a timing request's checked calls found and cost (they were right: a wrong one raises)."""

    checked: int  # the checked calls compared
    seconds: float  # checking them, computing the references included
    reference_s: float  # of which computing references for inputs not seen before


def check_timing_reply(variant: Variant, spec: BindSpec, plan: CheckPlan, reply: dict[str, Any]) -> TimingReplyChecked:
    """The checked calls of a timing request's reply (`check_timed_calls`) and, for device timing, whether its calls
    did device work outside their samples' windows or left it running after their end events
    (`reject_work_outside_window`, `reject_work_left_running`); raises TimedCallsWrong (the branch marked incorrect)
    when any is wrong."""
    started, computed = time.perf_counter(), reference_seconds()
    checked = check_timed_calls(variant, spec, plan, reply)
    reject_work_outside_window(variant, reply["samples"].extra)
    reject_work_left_running(variant, reply["samples"].extra)
    return TimingReplyChecked(checked, time.perf_counter() - started, reference_seconds() - computed)


class TimingReplyCheck:
    """The pytest process's decision on a timing request, as `bench.run.TimingCheck` asks for it: bench/ times and
    never decides, so its caller hands it this (`TIMING_REPLY_CHECK`) and every reply is checked before its samples
    are used."""

    def check_reply(self, variant: Variant, spec: BindSpec, plan: CheckPlan,
                    reply: dict[str, Any]) -> TimingReplyChecked:
        """`check_timing_reply`: raises TimedCallsWrong (the branch marked incorrect) when any check is wrong."""
        return check_timing_reply(variant, spec, plan, reply)

    def not_believed(self, variant: Variant, error: TimedCallsWrong | TamperedFiles) -> None:
        """A branch's own timing that the worker's supervisor refused (`TimingRefused`: what the pytest process
        measured refutes it) or whose files changed while it answered (`TamperedFiles`): its figures are not believed
        anywhere, a timing it made before (another size) included, so it is marked incorrect and never ranked."""
        kind = "kernel tampered" if isinstance(error, TamperedFiles) else "timing refused"
        variant.record.error = {"kind": kind, "message": str(error)}
        found_incorrect(variant)


TIMING_REPLY_CHECK = TimingReplyCheck()


def check_timed_calls(variant: Variant, spec: BindSpec, plan: CheckPlan, reply: dict[str, Any]) -> int:
    """Compare the outputs of the checked calls of a timing request with the reference; mark and raise if wrong.

    This process computes each call's inputs itself (from `spec` and `plan`), and requires every call the plan asked
    for: a worker that leaves one out is wrong as surely as one whose outputs are. Returns how many were compared.
    """
    assert variant.reference is not None
    checks: list[dict[str, Any]] = list(reply.get("checks") or [])
    for check in checks:
        wrong = _describe_wrong(variant, spec, plan, check)
        if wrong:
            _timed_calls_wrong(variant, spec, str(check.get("call")), str(check.get("setup", "")), wrong)
    missing = _missing_calls(variant, plan, reply, [tuple(check.get("inputs") or ()) for check in checks])
    if missing:
        _timed_calls_wrong(variant, spec, missing[0], "", [
            f"  the worker's reply left out the checked call{'s' if len(missing) > 1 else ''} {', '.join(missing)}: "
            "the calls a timing request names are all compared, so a reply without one is not believed"])
    return len(checks)


def _timed_calls_wrong(variant: Variant, spec: BindSpec, call: str, setup: str, wrong: list[str]) -> None:
    message = (f"{variant.label}: wrong outputs on {call}, although its correctness calls "
               f"passed (dims={json.dumps(dict(spec.dims))}). {setup} "
               f"Compute the full result from the inputs on every call.{size_note(variant, spec.dims)}\n"
               + "\n".join(wrong))
    variant.record.error = {"kind": "timed calls wrong", "message": message, "call": call, "dims": dict(spec.dims)}
    found_incorrect(variant)
    raise TimedCallsWrong(message)


def _missing_calls(variant: Variant, plan: CheckPlan, reply: dict[str, Any], found: list[tuple[Any, ...]]) -> list[str]:
    """The checked calls the plan asked for that the reply does not hold. The announced ones when asked for; unannounced
    timed calls where the toolchain prepares its timed calls (`Toolchain.checks_timed_calls`) and the call was
    reached (`timed_calls`; the first one always is)."""
    wanted: list[tuple[Any, ...]] = [("start",), ("set", 0)] if plan.announced else []
    if variant.params and plan.announced:
        wanted.append(("new",))
    if getattr(variant.toolchain, "checks_timed_calls", False):
        made = int(reply.get("timed_calls") or 0)
        numbers = range(made) if plan.every_call else [n for n in plan.checked if n < max(made, plan.checked[0] + 1)]
        wanted += [("timed", number) for number in numbers]
    return [" ".join(str(part) for part in want) for want in wanted if want not in found]


def _check_inputs(variant: Variant, spec: BindSpec, plan: CheckPlan, which: tuple[Any, ...],
                  start: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The inputs of one checked call of a timing request, computed here from `spec`, `plan` and the starting
    inputs `start`."""
    kind = which[0] if which else None
    if kind == "start" or (kind == "set" and int(which[1]) == 0):
        return start
    if kind == "set" and variant.params:
        other = replace(spec, seed=spec.seed + int(which[1]), provided={})
        return spec_inputs(variant, other)
    if kind == "new" and variant.params:
        key = ("new inputs", draw_key(variant.params, spec), plan.new_inputs_seed)  # two cases can share dims
        return held_inputs().get(key, lambda: redrawn_inputs(variant.params, spec, plan.new_inputs_seed))
    if kind == "timed":
        offsets = roll_offsets({name: array.size for name, array in start.items()}, plan.seed, int(which[1]))
        return {name: rolled(array, offsets[name]) for name, array in start.items()}
    raise TimedCallsWrong(f"{variant.label}: the worker's reply names a checked call on inputs {which!r}, which no "
                          "timing request asks for: the reply is not believed")



def size_note(variant: Variant, dims: Mapping[str, Any]) -> str:
    """For a benchmark size's dims (not the default dims the correctness test checks): the other likely cause."""
    if dict(dims) == dict(variant.case.dims):
        return ""
    return (" These are a benchmark size's dims, which the correctness test does not check: a kernel wrong only at "
            "this size (an index or a grid that overflows, a size-dependent code path) fails here as well; replay "
            f"them with its correctness test and --dcuopt-dims='{json.dumps(dict(dims))}'.")


def _describe_wrong(variant: Variant, spec: BindSpec, plan: CheckPlan, check: dict[str, Any]) -> list[str]:
    """The kernel's problems and output mismatches of one checked call ([] when it matches the reference on the
    inputs this process computed for it), with the same tolerances as the correctness stage (declared at these dims,
    reduction bounds included)."""
    snapshot: Snapshot = check["snapshot"]
    which = tuple(check.get("inputs") or ())
    if variant.params:
        snapshot = with_inputs(variant, snapshot, spec, _check_inputs(variant, spec, plan, which,
                                                                      spec_inputs(variant, spec)))
    elif snapshot.layout:  # a binding that lays out its own buffers: its inputs drawn here from the layout
        snapshot = with_inputs(variant, snapshot, spec, {})
        start = layout_inputs(variant, snapshot.layout, spec)
        snapshot.inputs.update(_check_inputs(variant, spec, plan, which, start))
    lines = [f"  kernel {problem}" for problem in snapshot.problems]
    lines += [m.describe() for m in output_mismatches(variant, snapshot, spec.dims, dict(spec.shapes))]
    return lines


def output_mismatches(variant: Variant, snapshot: Snapshot, dims: Mapping[str, Any],
                      shapes: Mapping[str, tuple[int, ...]]) -> list[Mismatch]:
    """Every output of one call compared with the reference at `dims`: the declared tolerances evaluated at these
    dims, and for a declared float reduction its error bound (`case.reference.reduction_bound`)."""
    assert variant.reference is not None
    if snapshot.incomplete:  # its problems fail the call: there is nothing whole to compare
        return []
    cache = reference_cache.shared_reference_cache()
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


def read_before_write_hint(mismatch: Mismatch, declared_inputs: Mapping[str, Any]) -> str | None:
    """For a pure output (not in ref.py `inputs`, so it starts as NaN poison) that came out NaN: the likely fix."""
    name = mismatch.output
    if mismatch.unwritten == 0 or name in declared_inputs:
        return None
    return (f"`{name}` came out NaN/unwritten in {mismatch.unwritten} of {mismatch.total} elements: if solve "
            f"accumulates into `{name}` (`+=`, atomics) from a caller-zeroed buffer, declare ref.py "
            f"initial = {{{name!r}: 'zeros'}}; if it updates `{name}` in place from data, declare it in ref.py "
            "`inputs` (it then starts with drawn values); otherwise those elements are never written.")
