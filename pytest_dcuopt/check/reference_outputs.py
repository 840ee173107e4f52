"""The float64 reference's outputs for a call: computed once per (case, dims, inputs) in this process and shared by
every branch and call (`reference_cache`), run on the host or a GPU (`reference_device`), bounded by
--dcuopt-timeout, and held to writing its outputs in place.

At real sizes the reference is the costliest part of a check (an 8192x6144x4096 matmul in float64 on the host), and
every branch, every stability call and every checked timed call asks for the same one.
"""
from __future__ import annotations

import signal
import threading
import time
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import numpy as np

from ..case.buffers import decode, is_float
from ..errors import CaseError
from ..toolchains.binding import Snapshot
from ..variant import Variant
from . import reference_cache, reference_device
from .reference_cache import reference_key


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
    cache = reference_cache.shared_reference_cache()
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

