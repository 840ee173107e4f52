"""The buffers of one C ABI call, `solve(...)`, in the worker: inputs drawn from their domains, outputs poisoned,
guard zones, snapshots; and loading a built library's `solve` for ctypes. Works for any Runtime (host numpy arrays
or device tensors).

Every pointer buffer is followed by a guard zone of poison, sized relative to the buffer (see
`guard_elements`): a write anywhere inside it is reported with its element index. A write beyond
the guard is not seen (it lands in memory the harness does not own: it may corrupt the heap or
crash the worker, which is then reported as a crash).
"""
from __future__ import annotations

import ctypes
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ..case.buffers import (
    GUARD_ELEMENTS,
    Domain,
    encode,
    is_float,
    numel,
    poison_value,
    storage_dtype,
)
from ..case.cabi import Param
from .base import Runtime
from .binding import BindSpec, Snapshot, draw_inputs, is_input, redrawn_inputs, rolled, rolled_into

# Guard zone after each buffer: at least GUARD_MIN_BYTES (and never fewer than GUARD_ELEMENTS elements), as
# long as the buffer itself, at most GUARD_MAX_BYTES (so a 10 GiB buffer does not get a 10 GiB guard).
GUARD_MIN_BYTES = 64 * 1024
GUARD_MAX_BYTES = 4 * 1024 * 1024

_CTYPES = {
    "int8": ctypes.c_int8, "uint8": ctypes.c_uint8, "int16": ctypes.c_int16, "uint16": ctypes.c_uint16,
    "int32": ctypes.c_int32, "uint32": ctypes.c_uint32, "int64": ctypes.c_int64, "uint64": ctypes.c_uint64,
    "float32": ctypes.c_float, "float64": ctypes.c_double, "bool": ctypes.c_bool,
}


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
    """Buffers for `solve(...)`: inputs drawn from their domains, outputs poisoned, guards after each.

    A snapshot carries the outputs, the scalars and the worker's findings (guards, const inputs), never the pointer
    inputs: the pytest process computes those itself (`draw_inputs` and friends) from what it asked for.
    """

    def __init__(self, params: Sequence[Param], spec: BindSpec, runtime: Runtime, entry: Callable[..., Any]) -> None:
        self.params = tuple(params)
        self.runtime = runtime
        self._entry = entry
        self._spec = replace(spec, provided={})
        self._host: dict[str, np.ndarray] = {}
        self._sizes: dict[str, int] = {}
        self._buffers: dict[str, Any] = {}
        # Non-const pointers with a declared value domain are in/out buffers, not pure outputs.
        self._inout = {p.name for p in self.params if p.pointer and not p.const and p.name in spec.domains}
        self._outputs = {p.name for p in self.params if p.pointer and not p.const and p.name not in self._inout}
        self._inputs = [p for p in self.params if is_input(p, spec)]
        self._base: dict[str, np.ndarray] = {}  # the starting values as asked for, while other values replace them
        self._redrawn: dict[int, dict[str, np.ndarray]] = {}  # new inputs by seed, drawn once per binding
        self._offsets: dict[str, int] = {}  # rotation of each input in its buffer now (`prepare_call`); 0: none
        self._staging: dict[str, np.ndarray] = {}  # host memory the snapshots download into, reused call after call
        # A device copy of each input's starting values (`_host[name]`, the very array) that `prepare_call` rotates
        # from on the device, where the runtime can (`Runtime.roll_into`).
        self._device_start: dict[str, tuple[np.ndarray, Any]] = {}
        # Buffers whose device copy holds exactly `_host[name]` (guard included): written or checked since the last
        # launch. `reset` skips them: at hundreds of MB a needless upload costs more than the kernel.
        self._matching: set[str] = set()
        starting = self._usable(spec) or draw_inputs(self.params, spec)
        for param in self.params:
            if param.pointer:
                self._host[param.name] = self._initial(param, spec, starting)
                self._sizes[param.name] = numel(spec.shapes[param.name])
                self._buffers[param.name] = runtime.upload(self._host[param.name])
                self._matching.add(param.name)
        self._args = [self._argument(p, spec) for p in self.params]

    def _initial(self, param: Param, spec: BindSpec, starting: Mapping[str, np.ndarray]) -> np.ndarray:
        count = numel(spec.shapes[param.name])
        dtype = storage_dtype(param.dtype)
        array = self.runtime.host_empty(count + guard_elements(count, dtype.itemsize), dtype)
        array[count:] = poison_value(param.dtype)
        array[:count] = starting[param.name] if param.name in starting else poison_value(param.dtype)
        return array

    def _usable(self, spec: BindSpec) -> Mapping[str, np.ndarray]:
        """`spec.provided` when it holds every input in its storage type and size; else {} (they are drawn)."""
        provided = spec.provided
        if not provided or set(provided) != {p.name for p in self._inputs}:
            return {}
        for param in self._inputs:
            array = provided[param.name]
            if array.dtype != storage_dtype(param.dtype) or array.size != numel(spec.shapes[param.name]):
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

    @property
    def input_sizes(self) -> dict[str, int]:
        return {p.name: self._sizes[p.name] for p in self._inputs}

    @property
    def rotates_outputs(self) -> bool:
        """Whether `prepare_call` rewrites a buffer the call writes (an in/out buffer)."""
        return bool(self._inout)

    def reset(self) -> None:
        """Restore pristine buffers (poisoned outputs, original inputs) before a checked call."""
        self._restore(self._host)

    def reset_inputs(self) -> None:
        """Restore the input and in/out buffers only: for a call whose outputs `scramble_outputs` fills next."""
        self._restore([name for name in self._host if name not in self._outputs])

    def _restore(self, names: Iterable[str]) -> None:
        for name in names:
            if name not in self._matching or self._offsets.get(name):
                self.runtime.write(self._buffers[name], self._host[name])
                self._matching.add(name)
                self._offsets.pop(name, None)

    def set_inputs(self, values: Mapping[str, np.ndarray]) -> None:
        """Other starting values (e.g. another seed's, handed by the pytest process) in the same buffers: the next
        call runs on the same pointers with new inputs. Guards keep their poison."""
        usable = self._usable(replace(self._spec, provided=dict(values)))
        if not usable:
            raise ValueError(f"set_inputs needs every input {sorted(p.name for p in self._inputs)} in its storage type "
                             f"and size; got {sorted(values)}")
        for name, array in usable.items():
            host = self._host[name]
            fresh = self.runtime.host_empty(len(host), host.dtype)
            fresh[self._sizes[name]:] = host[self._sizes[name]:]
            fresh[:self._sizes[name]] = array
            self._host[name] = fresh
            self._matching.discard(name)
        self._base = {}
        self._redrawn = {}

    def rebind(self, spec: BindSpec) -> None:
        """Another seed's inputs at the same dims, in the same buffers (from `spec.provided`, else drawn here)."""
        self.set_inputs(self._usable(spec) or draw_inputs(self.params, spec))
        self._spec = replace(spec, provided={})

    def prepare_call(self, offsets: Mapping[str, int]) -> None:
        """Before a timed call: every input rotated by its offset (`roll_offsets`), from the starting values, in the
        same buffers. I.i.d. values stay i.i.d. from the same domain (every declared domain draws each element
        independently), so the work is the same while no two calls see the same inputs."""
        for name, offset in offsets.items():
            host, count = self._host[name], self._sizes[name]
            buffer = self._buffers[name]
            if isinstance(buffer, np.ndarray):  # host memory: rotate straight into the buffer
                rolled_into(buffer, host[:count], offset)
            elif self.runtime.rolls_on_device:
                self.runtime.roll_into(buffer, self._device_copy_of_start(name), count, offset)
            else:
                staging = self._staging_for(name)
                staging[count:] = host[count:]
                rolled_into(staging, host[:count], offset)
                self.runtime.write(buffer, staging)
            self._offsets[name] = offset
            self._matching.discard(name)

    def _device_copy_of_start(self, name: str) -> Any:
        """The input's starting values (guard included) in device memory, uploaded once per starting array."""
        host = self._host[name]
        kept = self._device_start.get(name)
        if kept is None or kept[0] is not host:
            self._device_start.pop(name, None)  # the old copy's memory goes before the new one is taken
            kept = self._device_start[name] = (host, self.runtime.upload(host))
        return kept[1]

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
        """Write new input values (`redrawn_inputs` with `seed`) into the same buffers; pure outputs keep what they
        hold.

        For the check call after the timed ones: to the kernel it is one more timed call (same pointers, its
        outputs still holding its last result), only the input values differ. A kernel that hands back a result it
        kept from an earlier call (memoized on the pointers, or skipped because the output still holds what it
        wrote) is wrong there. `restore_inputs` puts the first inputs back for the calls that follow.
        """
        if seed not in self._redrawn:
            values = redrawn_inputs(self.params, self._spec, seed)
            arrays = {}
            for name, array in values.items():  # guards keep their poison: the buffer's guard with new values in front
                host, count = self._host[name], self._sizes[name]
                full = self.runtime.host_empty(len(host), host.dtype)
                full[count:] = host[count:]
                full[:count] = array
                arrays[name] = full
            self._redrawn[seed] = arrays
        for name, array in self._redrawn[seed].items():
            self._base.setdefault(name, self._host[name])
            self._host[name] = array
            self.runtime.write(self._buffers[name], array)
            self._offsets.pop(name, None)
            self._matching.add(name)

    def restore_inputs(self) -> None:
        """The inputs as first drawn again (on the device at the next `reset`)."""
        for name, array in self._base.items():
            self._host[name] = array
            self._matching.discard(name)
        self._base = {}

    def snapshot(self) -> Snapshot:
        """What the last call produced: its outputs (copies), its scalars, and what the worker found (writes past a
        buffer's end, writes into a const input). No pointer input: the pytest process holds those."""
        self.runtime.synchronize()
        inputs, outputs, dtypes, problems = {}, {}, {}, []
        for index, param in enumerate(self.params):
            dtypes[param.name] = param.dtype
            if not param.pointer:
                inputs[param.name] = np.asarray(self._args[index])
                continue
            count = self._sizes[param.name]
            current = self._download(param.name)
            pristine = self._host[param.name]
            overrun = _overrun(param.name, count, current, pristine)
            if overrun is not None:
                problems.append(overrun)
            if param.const:
                if not _same_rolled(current[:count], pristine[:count], self._offsets.get(param.name, 0)):
                    problems.append(f"modified its const input buffer {param.name!r}")
                elif overrun is None and not self._offsets.get(param.name):
                    self._matching.add(param.name)  # untouched, guard included: the next reset needs no upload
            else:
                # A copy: the staging memory (on the host: the buffer itself) is overwritten by the next call.
                outputs[param.name] = current[:count].copy()
        return Snapshot(inputs, outputs, dtypes, problems)

    def input_values(self) -> dict[str, np.ndarray]:
        """The inputs the buffers started the last call from (not rotated): for a binding whose pytest process does
        not compute them itself (the triton toolchain's contract binding)."""
        values = {}
        for param in self._inputs:
            start = self._host[param.name][:self._sizes[param.name]]
            offset = self._offsets.get(param.name, 0)
            values[param.name] = rolled(start, offset).copy() if offset else start.copy()
        return values

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


def _same_rolled(current: np.ndarray, base: np.ndarray, offset: int) -> bool:
    """`current` holds `rolled(base, offset)` bit for bit (offset 0: `base`), compared in place."""
    if not offset:
        return _same_bits(current, base)
    count = base.size
    return _same_bits(current[:count - offset], base[offset:]) and _same_bits(current[count - offset:], base[:offset])


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit-identical (NaN payloads included); compared in 8-byte words where the size allows (25x faster than
    bytes: 10 ms for 128 MB)."""
    left, right = np.ascontiguousarray(a), np.ascontiguousarray(b)
    if left.nbytes != right.nbytes:
        return False
    word = next(size for size in (8, 4, 2, 1) if left.nbytes % size == 0)
    return bool(np.array_equal(left.reshape(-1).view(f"u{word}"), right.reshape(-1).view(f"u{word}")))
