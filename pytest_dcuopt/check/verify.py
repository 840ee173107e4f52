"""The correctness stage: run a branch in its worker, call the reference on the same inputs, compare.

`run_correctness` is what `test_correctness_<toolchain>[<branch>]` does: the default dims first,
then Hypothesis draws (which also shrink a failure to a minimal example). `checked_call` is one
call at given dims and seed; hand-written tests reach it through the `dcuopt_case` fixture.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from ..case.buffers import is_float
from ..errors import CaseError, DcuOptError, KernelCrashed, KernelTimeout, WorkerError
from ..toolchains.binding import BindSpec, Snapshot
from ..variant import Variant
from .compare import compare, decode_all, dims_strategy, reproduce_command, tolerances

_CRASH_KINDS: dict[type, str] = {KernelCrashed: "crashed", KernelTimeout: "timed out", WorkerError: "raised"}


@dataclass(frozen=True)
class CheckSettings:
    """What the correctness stage needs from the run's options."""

    examples: int | None
    hypothesis_profile: str
    replay_dims: dict[str, Any] | None = None
    replay_seed: int | None = None


def run_correctness(variant: Variant, settings: CheckSettings, nodeid: str) -> str | None:
    """The failure message of the first wrong result (None when every example passed); updates the record."""
    if settings.replay_dims is not None:
        failure = replay(variant, settings, nodeid)
    else:
        failure = first_failure(variant, settings, nodeid)
    variant.record.examples = variant.examples
    if failure is not None:
        variant.failed_correctness = True
        variant.record.correct = False
        variant.record.failure = variant.last_failure or {
            "dims": dict(variant.case.dims), "seed": 0, "message": failure, "reproduce": reproduce_command(nodeid, variant.case.dims, 0)}
        return failure
    variant.record.correct = True
    return None


def replay(variant: Variant, settings: CheckSettings, nodeid: str) -> str | None:
    dims = {**variant.case.dims, **(settings.replay_dims or {})}
    try:
        checked_call(variant, dims, settings.replay_seed or 0, nodeid)
    except (AssertionError, DcuOptError) as exc:
        return with_notes(exc)
    return None


def first_failure(variant: Variant, settings: CheckSettings, nodeid: str) -> str | None:
    """The default dims first; then Hypothesis, which also shrinks a wrong result seen at the default dims."""
    default: tuple[str, dict[str, Any] | None] | None = None
    try:
        checked_call(variant, variant.case.dims, 0, nodeid)
        variant.default_verified = True
    except DcuOptError as exc:  # a crash or hang: searching further would only repeat it
        return with_notes(exc)
    except AssertionError as exc:
        default = (with_notes(exc), variant.last_failure)
    try:
        hypothesis_search(variant, settings, nodeid)
    except (AssertionError, DcuOptError) as exc:
        return with_notes(exc)
    if default is not None:  # only the default dims are wrong
        variant.last_failure = default[1]
        return default[0]
    return None


def hypothesis_search(variant: Variant, settings: CheckSettings, nodeid: str) -> None:
    from hypothesis import HealthCheck, Phase, given
    from hypothesis import settings as hypothesis_settings
    from hypothesis import strategies as st

    assert variant.reference is not None
    dims_st = dims_strategy(variant.reference.dim_ranges, variant.case.dims)
    profile = hypothesis_settings.get_profile(settings.hypothesis_profile)
    phases = [p for p in profile.phases if p is not Phase.explain]  # its line lists point into the harness
    chosen = hypothesis_settings(profile, max_examples=settings.examples or profile.max_examples, deadline=None,
                                 suppress_health_check=list(HealthCheck), phases=phases)

    @chosen
    @given(dims=dims_st, seed=st.integers(0, 2**31 - 1))
    def correct_for_all_drawn_dims(dims: dict[str, Any], seed: int) -> None:
        checked_call(variant, dims, seed, nodeid)

    correct_for_all_drawn_dims()


def checked_call(variant: Variant, dims: Mapping[str, Any], seed: int, nodeid: str,
                 reproduce: str | None = None) -> None:
    """One call at `dims`/`seed` compared with the reference; AssertionError (or a DcuOptError) when wrong."""
    assert variant.worker is not None and variant.reference is not None
    variant.examples += 1
    shapes = variant.shapes(dims)
    spec = BindSpec(dict(dims), seed, shapes, variant.reference.inputs)
    reproduce = reproduce or reproduce_command(nodeid, dims, seed)
    try:
        snapshot: Snapshot = variant.worker.request("run", spec=spec)
    except (KernelCrashed, KernelTimeout, WorkerError) as exc:
        message = f"{exc}\ndims={dict(dims)} seed={seed}"
        variant.last_failure = {"dims": dict(dims), "seed": seed, "message": message, "reproduce": reproduce}
        variant.record.error = {"kind": f"kernel {_CRASH_KINDS[type(exc)]}", "message": str(exc)}
        raise
    expected = reference_outputs(variant, snapshot, dims, shapes)
    mismatches = []
    for name, kernel_out in snapshot.outputs.items():
        dtype = snapshot.dtypes[name]
        atol, rtol = tolerances(dtype, variant.reference.atol, variant.reference.rtol)
        shape = shapes.get(name) or kernel_out.shape
        found = compare(name, decode_all({name: kernel_out}, snapshot.dtypes)[name], expected[name], dtype,
                        shape, atol, rtol)
        if found is not None:
            mismatches.append(found)
    if mismatches or snapshot.problems:
        lines = [f"{variant.label} is wrong for dims={json.dumps(dict(dims))} seed={seed}:"]
        lines += [f"  kernel {p}" for p in snapshot.problems]
        lines += [m.describe() for m in mismatches]
        lines.append(f"reproduce: {reproduce}")
        message = "\n".join(lines)
        variant.last_failure = {"dims": dict(dims), "seed": seed, "message": message, "reproduce": reproduce,
                                "mismatches": [m.to_json() for m in mismatches], "problems": snapshot.problems}
        raise AssertionError(message)


def reference_outputs(variant: Variant, snapshot: Snapshot, dims: Mapping[str, Any],
                      shapes: Mapping[str, tuple[int, ...]]) -> dict[str, np.ndarray]:
    """Call the reference on the values the kernel saw (in/out buffers: their values *before* the call)."""
    import torch

    assert variant.reference is not None
    declared = variant.reference.shapes is not None
    # An in/out buffer appears in both: the reference must start from what the kernel started from.
    values = decode_all({**snapshot.outputs, **snapshot.inputs}, snapshot.dtypes)
    kwargs: dict[str, Any] = {}
    names = [p.name for p in variant.params] or list(snapshot.inputs) + list(snapshot.outputs)
    for name in dict.fromkeys(names):
        array = values[name]
        if array.ndim == 0:
            kwargs[name] = array.item()
            continue
        if name in snapshot.outputs and name not in snapshot.inputs:
            array = np.zeros_like(array)
        shape = shapes.get(name, array.shape) if declared or not shapes else (array.size,)
        kwargs[name] = torch.from_numpy(np.ascontiguousarray(array).reshape(shape))
    try:
        variant.reference.function(**kwargs)
    except Exception as exc:
        raise CaseError(f"{variant.reference.path}: reference(**kwargs) raised {type(exc).__name__}: {exc} "
                        f"(kwargs: {sorted(kwargs)}, dims {dict(dims)}). It must accept the kernel's parameter "
                        "names and write outputs in place.") from exc
    return {name: kwargs[name].detach().cpu().numpy().astype(np.float64 if is_float(snapshot.dtypes[name])
                                                              else np.int64).ravel()
            for name in snapshot.outputs}


def with_notes(exc: BaseException) -> str:
    """The error text plus the notes Hypothesis attaches (the falsifying example)."""
    notes = [n for n in getattr(exc, "__notes__", []) if n.strip()]
    return "\n".join([str(exc), *notes])
