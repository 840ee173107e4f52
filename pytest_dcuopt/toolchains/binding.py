"""Buffers bound to one kernel call: generated inputs, poisoned outputs, guard zones, snapshots.

Used inside the worker process. Works for any Runtime (host numpy arrays or device tensors).
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..case.buffers import (
    GUARD_ELEMENTS,
    Domain,
    default_domain,
    encode,
    numel,
    poison_value,
    storage_dtype,
)
from ..case.cabi import Param
from .base import Runtime

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


@dataclass
class Snapshot:
    """What a call saw and produced: input values, output values, guard and input-integrity findings."""

    inputs: dict[str, np.ndarray]
    outputs: dict[str, np.ndarray]
    dtypes: dict[str, str]
    problems: list[str]


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


class CAbiBinding:
    """Buffers for `solve(...)`: inputs drawn from their domains, outputs poisoned, guards after each."""

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
        for param in self.params:
            if param.pointer:
                self._host[param.name] = self._initial(param, spec, rng)
                self._sizes[param.name] = numel(spec.shapes[param.name])
                self._buffers[param.name] = runtime.upload(self._host[param.name])
        self._args = [self._argument(p, spec) for p in self.params]

    def _initial(self, param: Param, spec: BindSpec, rng: np.random.Generator) -> np.ndarray:
        count = numel(spec.shapes[param.name])
        dtype = storage_dtype(param.dtype)
        array = np.empty(count + GUARD_ELEMENTS, dtype=dtype)
        array[count:] = poison_value(param.dtype)
        is_input = param.const or param.name in spec.domains
        if is_input:
            domain = spec.domains.get(param.name, default_domain(param.dtype))
            array[:count] = encode(domain.draw(rng, count), param.dtype)
        else:
            array[:count] = poison_value(param.dtype)
        return array

    def _argument(self, param: Param, spec: BindSpec) -> Any:
        if param.pointer:
            return self.runtime.pointer(self._buffers[param.name])
        if param.name in spec.dims:
            return spec.dims[param.name]
        raise KeyError(f"no value for scalar parameter {param.name!r}: add it to dims.json or to ref.py `inputs`")

    def launch(self) -> None:
        self._entry(*self._args)

    @property
    def nbytes(self) -> int:
        """Bytes of all pointer buffers of one call (the working set a cache could hold)."""
        return int(sum(array.nbytes for array in self._host.values()))

    def reset(self) -> None:
        """Restore pristine buffers (poisoned outputs, original inputs) before a checked call."""
        for name, array in self._host.items():
            self.runtime.write(self._buffers[name], array)

    def snapshot(self) -> Snapshot:
        self.runtime.synchronize()
        inputs, outputs, dtypes, problems = {}, {}, {}, []
        for param in self.params:
            if not param.pointer:
                inputs[param.name] = np.asarray(self._args[self.params.index(param)])
                dtypes[param.name] = param.dtype
                continue
            count = self._sizes[param.name]
            current = self.runtime.download(self._buffers[param.name])
            pristine = self._host[param.name]
            dtypes[param.name] = param.dtype
            if not _same_bits(current[count:], pristine[count:]):
                first = int(np.flatnonzero(_bits(current[count:]) != _bits(pristine[count:]))[0])
                problems.append(f"wrote past the end of buffer {param.name!r} ({count} elements): element "
                                f"{count + first} changed")
            if param.const:
                if not _same_bits(current[:count], pristine[:count]):
                    problems.append(f"modified its const input buffer {param.name!r}")
                inputs[param.name] = pristine[:count].copy()
            else:
                outputs[param.name] = current[:count].copy()
                if param.name in self._inout:
                    inputs[param.name] = pristine[:count].copy()
        return Snapshot(inputs, outputs, dtypes, problems)


def _bits(array: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(array).view(np.uint8)


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.array_equal(_bits(a), _bits(b)))
