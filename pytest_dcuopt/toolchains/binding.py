"""Buffers bound to one kernel call: generated inputs, poisoned outputs, guard zones, snapshots.

Used inside the worker process. Works for any Runtime (host numpy arrays or device tensors).

Every pointer buffer is followed by a guard zone of poison, sized relative to the buffer (see
`guard_elements`): a write anywhere inside it is reported with its element index. A write beyond
the guard is not seen (it lands in memory the harness does not own: it may corrupt the heap or
crash the worker, which is then reported as a crash).
"""
from __future__ import annotations

import ctypes
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..case.buffers import (
    GUARD_ELEMENTS,
    Domain,
    default_domain,
    encode,
    is_float,
    numel,
    poison_value,
    storage_dtype,
)
from ..case.cabi import Param
from .base import Runtime
from .exchange import Exchange, buffer_digest, call_token

# Guard zone after each buffer: at least GUARD_MIN_BYTES (and never fewer than GUARD_ELEMENTS elements), as
# long as the buffer itself, at most GUARD_MAX_BYTES (so a 10 GiB buffer does not get a 10 GiB guard).
GUARD_MIN_BYTES = 64 * 1024
GUARD_MAX_BYTES = 4 * 1024 * 1024

_CTYPES = {
    "int8": ctypes.c_int8, "uint8": ctypes.c_uint8, "int16": ctypes.c_int16, "uint16": ctypes.c_uint16,
    "int32": ctypes.c_int32, "uint32": ctypes.c_uint32, "int64": ctypes.c_int64, "uint64": ctypes.c_uint64,
    "float32": ctypes.c_float, "float64": ctypes.c_double, "bool": ctypes.c_bool,
}


@dataclass(frozen=True)
class BindSpec:
    """Everything needed to build the buffers of one call (sent from the pytest process)."""

    dims: Mapping[str, Any]
    seed: int
    shapes: Mapping[str, tuple[int, ...]]
    domains: Mapping[str, Domain] = field(default_factory=dict)
    # Every drawn input's starting values, as another worker drew them for the same `draw_key` (the pytest process
    # hands them over instead of letting this worker draw them again); empty: draw. Not part of the spec's identity.
    provided: Mapping[str, np.ndarray] = field(default_factory=dict, compare=False, repr=False)


def draw_key(params: Sequence[Param], spec: BindSpec) -> tuple[Any, ...]:
    """Everything the starting values of a binding's inputs depend on (`CAbiBinding._initial` draws them in parameter
    order from one generator seeded with `spec.seed`): equal keys, bit-identical inputs."""
    return (tuple((p.name, p.dtype, p.pointer, p.const) for p in params), tuple(sorted(spec.dims.items())), spec.seed,
            tuple(sorted(spec.shapes.items())), tuple(sorted(spec.domains.items())))


@dataclass
class Snapshot:
    """What a call saw and produced: input values, output values, guard and input-integrity findings."""

    inputs: dict[str, np.ndarray]
    outputs: dict[str, np.ndarray]
    dtypes: dict[str, str]
    problems: list[str]
    # Filled by bindings that name their buffers by digest (toolchains/exchange.py); empty for the others.
    input_digests: dict[str, str] = field(default_factory=dict)  # each pointer input (in/out starting values too)
    omitted_inputs: tuple[str, ...] = ()  # inputs left out: the pytest process holds them (put back on receipt)
    token: str | None = None  # the call: dims, input and output digests (exchange.call_token)
    verified: bool = False  # outputs left out: the token was listed as verified for this case


def ctypes_signature(params: Sequence[Param]) -> list[Any]:
    argtypes: list[Any] = []
    for param in params:
        if param.pointer:
            argtypes.append(ctypes.c_void_p)
        elif param.dtype in _CTYPES:
            argtypes.append(_CTYPES[param.dtype])
        else:
            raise TypeError(f"scalar parameter {param.name!r} of type {param.dtype} cannot be passed through ctypes; "
                            "use float, double or an integer type")
    return argtypes


def load_solve(path: Any, params: Sequence[Param]) -> tuple[ctypes.CDLL, Any]:
    """Load a built kernel library and type its `solve` entry point for ctypes."""
    library = ctypes.CDLL(str(path))
    entry = library.solve
    entry.argtypes = ctypes_signature(params)
    entry.restype = None
    return library, entry


def guard_elements(count: int, itemsize: int) -> int:
    """Elements of poison after a buffer of `count` elements: max(64 KiB, the buffer) capped at 4 MiB."""
    wanted = max(count, GUARD_MIN_BYTES // itemsize)
    return max(GUARD_ELEMENTS, min(wanted, GUARD_MAX_BYTES // itemsize))


class CAbiBinding:
    """Buffers for `solve(...)`: inputs drawn from their domains, outputs poisoned, guards after each."""

    exchanges_by_digest = True  # snapshot(exchange) leaves out what the pytest process holds (toolchains/exchange.py)

    def __init__(self, params: Sequence[Param], spec: BindSpec, runtime: Runtime, entry: Callable[..., Any]) -> None:
        self.params = tuple(params)
        self.runtime = runtime
        self._entry = entry
        rng = np.random.default_rng(spec.seed)
        self._host: dict[str, np.ndarray] = {}
        self._sizes: dict[str, int] = {}
        self._buffers: dict[str, Any] = {}
        # Non-const pointers with a declared value domain are in/out buffers, not pure outputs.
        self._inout = {p.name for p in self.params if p.pointer and not p.const and p.name in spec.domains}
        self._outputs = {p.name for p in self.params if p.pointer and not p.const and p.name not in self._inout}
        self._domains = dict(spec.domains)
        self._drawn: dict[str, np.ndarray] = {}  # the inputs as first drawn, while `redraw_inputs` replaced them
        self._dims = dict(spec.dims)
        # New inputs are deterministic in their seed: drawn once per binding, copied in afterwards.
        self._redrawn: dict[int, dict[str, np.ndarray]] = {}
        self._digests: dict[str, str] = {}  # of the inputs the buffers start from now (see `_input_digest`)
        self._first_digests: dict[str, str] = {}  # of the first inputs, while `redraw_inputs` replaced them
        self._redrawn_digests: dict[int, dict[str, str]] = {}  # per redraw seed, filled as `_digests` when current
        self._staging: dict[str, np.ndarray] = {}  # host memory the snapshots download into, reused call after call
        # Buffers whose device copy holds exactly `_host[name]` (guard included): written or checked since the last
        # launch. `reset` skips them: at hundreds of MB a needless upload costs more than the kernel.
        self._matching: set[str] = set()
        provided = self._usable(spec)
        for param in self.params:
            if param.pointer:
                self._host[param.name] = self._initial(param, spec, rng, provided)
                self._sizes[param.name] = numel(spec.shapes[param.name])
                self._buffers[param.name] = runtime.upload(self._host[param.name])
                self._matching.add(param.name)
        self._args = [self._argument(p, spec) for p in self.params]

    def _initial(self, param: Param, spec: BindSpec, rng: np.random.Generator,
                 provided: Mapping[str, np.ndarray]) -> np.ndarray:
        count = numel(spec.shapes[param.name])
        dtype = storage_dtype(param.dtype)
        array = self.runtime.host_empty(count + guard_elements(count, dtype.itemsize), dtype)
        array[count:] = poison_value(param.dtype)
        if param.name in provided:
            array[:count] = provided[param.name]
        elif self._is_input(param, spec):
            domain = spec.domains.get(param.name, default_domain(param.dtype))
            domain.draw_into(rng, array[:count], param.dtype)
        else:
            array[:count] = poison_value(param.dtype)
        return array

    @staticmethod
    def _is_input(param: Param, spec: BindSpec) -> bool:
        return param.pointer and (param.const or param.name in spec.domains)

    def _usable(self, spec: BindSpec) -> Mapping[str, np.ndarray]:
        """`spec.provided` when it holds every input in its storage type and size; else {} and every input is drawn
        (all or nothing: the inputs are drawn from one generator in order, so a partial set would shift the rest)."""
        inputs = {p.name: p for p in self.params if self._is_input(p, spec)}
        provided = spec.provided
        if not provided or set(provided) != set(inputs):
            return {}
        for name, param in inputs.items():
            array = provided[name]
            if array.dtype != storage_dtype(param.dtype) or array.size != numel(spec.shapes[name]):
                return {}
        return {name: np.asarray(array).reshape(-1) for name, array in provided.items()}

    def _argument(self, param: Param, spec: BindSpec) -> Any:
        if param.pointer:
            return self.runtime.pointer(self._buffers[param.name])
        if param.name in spec.dims:
            return spec.dims[param.name]
        raise KeyError(f"no value for scalar parameter {param.name!r}: add it to dims.json or to ref.py `inputs`")

    def launch(self) -> None:
        self._matching.clear()  # the kernel may write any buffer (a const one too: snapshots catch that)
        self._entry(*self._args)

    @property
    def nbytes(self) -> int:
        """Bytes of all pointer buffers of one call (the working set a cache could hold; guards excluded)."""
        return int(sum(array[:self._sizes[name]].nbytes for name, array in self._host.items()))

    def reset(self) -> None:
        """Restore pristine buffers (poisoned outputs, original inputs) before a checked call."""
        self._restore(self._host)

    def reset_inputs(self) -> None:
        """Restore the input and in/out buffers only: for a call whose outputs `scramble_outputs` fills next."""
        self._restore([name for name in self._host if name not in self._outputs])

    def _restore(self, names: Iterable[str]) -> None:
        for name in names:
            if name not in self._matching:
                self.runtime.write(self._buffers[name], self._host[name])
                self._matching.add(name)

    def scramble_outputs(self, seed: int) -> None:
        """Fill the pure outputs with finite junk that looks like an earlier result (not the NaN poison).

        Used before the check calls among timed calls: a kernel that skips work when its output already
        holds a value would leave this junk in place. In/out buffers keep their inputs; guards their poison.
        The junk is drawn into the buffer's staging memory and written from there: no fresh memory per call.
        """
        rng = np.random.default_rng([seed, 0x5C3A])
        for param in self.params:
            if param.name not in self._outputs:
                continue
            count, host = self._sizes[param.name], self._host[param.name]
            array = self._staging_for(param.name)
            array[count:] = host[count:]
            junk_into(rng, array[:count], param.dtype)
            self.runtime.write(self._buffers[param.name], array)
            self._matching.discard(param.name)

    def redraw_inputs(self, seed: int) -> None:
        """Write new input values (drawn with `seed`) into the same buffers; pure outputs keep what they hold.

        For the check call after the timed ones: to the kernel it is one more timed call (same pointers, its
        outputs still holding its last result), only the input values differ. A kernel that hands back a result it
        kept from an earlier call (memoized on the pointers, or skipped because the output still holds what it
        wrote) is wrong there. `restore_inputs` puts the first inputs back for the calls that follow.
        """
        rng = np.random.default_rng([seed, 0x1D5])
        drawn = self._redrawn.setdefault(seed, {})
        if not self._drawn:
            self._first_digests = self._digests
        self._digests = self._redrawn_digests.setdefault(seed, {})  # the same arrays each time: hashed once
        for param in self.params:
            if not param.pointer or not (param.const or param.name in self._inout):
                continue
            if param.name not in drawn:  # guards keep their poison: the buffer's guard with new values in front
                host, count = self._host[param.name], self._sizes[param.name]
                array = self.runtime.host_empty(len(host), host.dtype)
                array[count:] = host[count:]
                domain = self._domains.get(param.name, default_domain(param.dtype))
                domain.redraw_into(rng, array[:count], param.dtype)
                drawn[param.name] = array
            self._drawn.setdefault(param.name, self._host[param.name])
            self._host[param.name] = drawn[param.name]
            self.runtime.write(self._buffers[param.name], drawn[param.name])
            self._matching.add(param.name)

    def restore_inputs(self) -> None:
        """The inputs as first drawn again (on the device at the next `reset`)."""
        for name, array in self._drawn.items():
            self._host[name] = array
            self._matching.discard(name)
        if self._drawn:
            self._digests = self._first_digests
        self._drawn = {}

    def _input_digest(self, param: Param) -> str:
        """The digest of the input the buffer starts from (computed once per input set)."""
        if param.name not in self._digests:
            count = self._sizes[param.name]
            self._digests[param.name] = buffer_digest(param.name, param.dtype, self._host[param.name][:count])
        return self._digests[param.name]

    def snapshot(self, exchange: Exchange | None = None) -> Snapshot:
        """What the last call saw and produced. With `exchange` (toolchains/exchange.py), inputs the pytest process
        holds are left out by digest, and outputs too when the whole call matches a verified token."""
        exchange = exchange or Exchange()
        self.runtime.synchronize()
        inputs, outputs, dtypes, problems = {}, {}, {}, []
        input_digests: dict[str, str] = {}
        output_digests: dict[str, str] = {}
        omitted: list[str] = []
        for param in self.params:
            if not param.pointer:
                inputs[param.name] = np.asarray(self._args[self.params.index(param)])
                dtypes[param.name] = param.dtype
                continue
            count = self._sizes[param.name]
            current = self._download(param.name)
            pristine = self._host[param.name]
            dtypes[param.name] = param.dtype
            overrun = _overrun(param.name, count, current, pristine)
            if overrun is not None:
                problems.append(overrun)
            if param.const or param.name in self._inout:
                input_digests[param.name] = digest = self._input_digest(param)
                if digest in exchange.known_inputs:
                    omitted.append(param.name)
                else:  # no copy: the binding never writes into its host arrays (new inputs are new arrays)
                    inputs[param.name] = pristine[:count]
            if param.const:
                if not _same_bits(current[:count], pristine[:count]):
                    problems.append(f"modified its const input buffer {param.name!r}")
                elif overrun is None:
                    self._matching.add(param.name)  # untouched, guard included: the next reset needs no upload
            else:
                outputs[param.name] = current[:count]
                output_digests[param.name] = buffer_digest(param.name, param.dtype, outputs[param.name])
        token = call_token(self._dims, input_digests, output_digests)
        verified = token in exchange.verified and not problems
        # Copies: the staging memory (on the host: the buffer itself) is overwritten by the next call.
        outputs = {} if verified else {name: array.copy() for name, array in outputs.items()}
        return Snapshot(inputs, outputs, dtypes, problems, input_digests, tuple(omitted), token, verified)

    def _download(self, name: str) -> np.ndarray:
        """The buffer's current contents (guard included), in this binding's staging memory for the buffer."""
        return self.runtime.download_into(self._buffers[name], self._staging_for(name))

    def _staging_for(self, name: str) -> np.ndarray:
        staging = self._staging.get(name)
        if staging is None:
            host = self._host[name]
            staging = self._staging[name] = self.runtime.host_empty(len(host), host.dtype)
        return staging


JUNK_FLOATS = Domain("uniform", 0.0, 1.0)
JUNK_BLOCK = (1 << 20) + 3  # elements drawn per junk fill; longer outputs repeat them (an odd period: no row aligns)


def junk_into(rng: np.random.Generator, out: np.ndarray, dtype: str) -> None:
    """Fill `out` (1-D) with junk: `encode(junk_values(...))` for its first JUNK_BLOCK elements (floats drawn straight
    into `out`, the uniform fill of `Domain.redraw_into`), repeated over the rest.

    Repeated, not drawn: drawing is the slow part (0.17 s for a 32M-element output on the H200's host, three times per
    timing request), and a kernel that keeps an output it finds already filled fails on any finite junk."""
    block = out[:JUNK_BLOCK]
    if is_float(dtype):
        JUNK_FLOATS.redraw_into(rng, block, dtype)
    else:
        block[...] = encode(junk_values(rng, block.size, dtype), dtype)
    for start in range(block.size, out.size, block.size):
        stop = min(start + block.size, out.size)
        out[start:stop] = block[:stop - start]


def junk_values(rng: np.random.Generator, count: int, dtype: str) -> np.ndarray:
    """Finite values in [0, 1) (floats) or [0, 100] (integers, bool: 0/1) standing for an earlier call's result:
    drawn in single precision, ~10x faster than a normal draw (a 32M-element output: 0.05 s)."""
    if dtype == "bool":
        return rng.integers(0, 1, count, endpoint=True, dtype=np.int8)
    if is_float(dtype):
        return rng.random(count, dtype=np.float32)
    return rng.integers(0, 100, count, endpoint=True, dtype=np.int64)


def _overrun(name: str, count: int, current: np.ndarray, pristine: np.ndarray) -> str | None:
    """Where a kernel wrote into the guard after buffer `name`, in elements (not bytes); None when untouched."""
    changed = np.flatnonzero(_element_bits(current[count:]) != _element_bits(pristine[count:]))
    if not changed.size:
        return None
    first, last = int(changed[0]), int(changed[-1])
    where = f"element {count + first}" if changed.size == 1 else (
        f"elements {count + first} to {count + last} ({changed.size} changed)")
    return (f"wrote past the end of buffer {name!r} ({count} elements, the last is element {count - 1}): {where}. "
            f"The guard checked elements {count} to {len(pristine) - 1}; check the loop bounds and the index "
            "arithmetic for this size")


def _element_bits(array: np.ndarray) -> np.ndarray:
    """One unsigned integer per element holding its bits: NaN payloads compare exactly, indices stay elements."""
    contiguous = np.ascontiguousarray(array)
    return contiguous.view(np.dtype(f"u{contiguous.dtype.itemsize}"))


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit-identical (NaN payloads included); compared in 8-byte words where the size allows (25x faster than
    bytes: 10 ms for 128 MB)."""
    left, right = np.ascontiguousarray(a), np.ascontiguousarray(b)
    if left.nbytes != right.nbytes:
        return False
    word = next(size for size in (8, 4, 2, 1) if left.nbytes % size == 0)
    return bool(np.array_equal(left.reshape(-1).view(f"u{word}"), right.reshape(-1).view(f"u{word}")))
