"""Buffer shapes, dtypes, input generation and poison values (host side, numpy only)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import CaseError
from .cabi import Param

# Elements of poison placed after every buffer; a kernel that writes past its end is caught.
GUARD_ELEMENTS = 1024
# The seed workflow's fallback buffer size when nothing else is known.
SEED_DEFAULT_ELEMENTS = 1024 * 1024
# The seed capped silently at this size; we refuse instead.
SEED_MAX_ELEMENTS = 256 * 1024 * 1024

FLOAT_DTYPES = {"float16", "bfloat16", "float32", "float64"}


def storage_dtype(dtype: str) -> np.dtype[Any]:
    """numpy dtype that stores `dtype` (bfloat16 is kept as its uint16 bit pattern)."""
    return np.dtype(np.uint16) if dtype == "bfloat16" else np.dtype(dtype)


def is_float(dtype: str) -> bool:
    return dtype in FLOAT_DTYPES


def poison_value(dtype: str) -> Any:
    """NaN for floats, an unlikely sentinel for integers: unwritten elements then fail the comparison."""
    if dtype == "bfloat16":
        return np.uint16(0x7FC1)  # a quiet NaN bit pattern
    if is_float(dtype):
        return np.nan
    if dtype == "bool":
        return True
    info = np.iinfo(np.dtype(dtype))
    return info.min + 7 if info.min < 0 else info.max - 7


def encode(values: np.ndarray, dtype: str) -> np.ndarray:
    """Convert float64/int values to the storage array of `dtype` (round to nearest even for bf16)."""
    if dtype == "bfloat16":
        as32 = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
        rounded = as32 + (np.uint32(0x7FFF) + ((as32 >> np.uint32(16)) & np.uint32(1)))
        return (rounded >> np.uint32(16)).astype(np.uint16)
    return np.ascontiguousarray(values).astype(storage_dtype(dtype))


def decode(stored: np.ndarray, dtype: str) -> np.ndarray:
    """Storage array -> float64 (floats) or int64 (ints) values for comparison and references."""
    if dtype == "bfloat16":
        return (stored.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
    if is_float(dtype):
        return stored.astype(np.float64)
    return stored.astype(np.int64)


@dataclass(frozen=True)
class Domain:
    """Where an input's values come from: ("normal", mean, std), ("uniform", lo, hi) or ("int", lo, hi)."""

    kind: str
    a: float
    b: float

    @classmethod
    def parse(cls, name: str, spec: Any) -> Domain:
        if not isinstance(spec, (tuple, list)) or len(spec) != 3 or spec[0] not in ("normal", "uniform", "int"):
            raise CaseError(
                f"ref.py: inputs[{name!r}] = {spec!r} is not a value domain. Use ('normal', mean, std), "
                "('uniform', lo, hi) or ('int', lo, hi)."
            )
        return cls(str(spec[0]), float(spec[1]), float(spec[2]))

    def draw(self, rng: np.random.Generator, size: int) -> np.ndarray:
        if self.kind == "normal":
            return rng.normal(self.a, self.b, size)
        if self.kind == "uniform":
            return rng.uniform(self.a, self.b, size)
        return rng.integers(int(self.a), int(self.b), size, endpoint=True).astype(np.float64)

    def to_json(self) -> list[Any]:
        return [self.kind, self.a, self.b]


def default_domain(dtype: str) -> Domain:
    if is_float(dtype):
        return Domain("normal", 0.0, 1.0)
    if dtype == "bool":
        return Domain("int", 0, 1)
    return Domain("int", 0, 16)


def resolve_shapes(
    params: Sequence[Param], shapes: Mapping[str, Sequence[Any]] | None, dims: Mapping[str, Any], source: str
) -> dict[str, tuple[int, ...]]:
    """Element shape of every pointer parameter for these dims."""
    pointers = [p for p in params if p.pointer]
    if shapes:
        return {p.name: _declared_shape(p, shapes, dims, source) for p in pointers}
    count = seed_buffer_elements(params, dims, source)
    return {p.name: (count,) for p in pointers}


def _declared_shape(param: Param, shapes: Mapping[str, Sequence[Any]], dims: Mapping[str, Any], source: str) -> tuple[int, ...]:
    if param.name not in shapes:
        raise CaseError(
            f"ref.py: `shapes` has no entry for pointer parameter {param.name!r} of {source}. "
            f"Add e.g. shapes[{param.name!r}] = ('N',)."
        )
    shape = []
    for entry in shapes[param.name]:
        if isinstance(entry, int):
            shape.append(entry)
        elif isinstance(entry, str) and entry in dims:
            shape.append(int(dims[entry]))
        else:
            raise CaseError(
                f"ref.py: shapes[{param.name!r}] uses {entry!r}, which is neither an int nor a dim in {sorted(dims)}."
            )
    return tuple(shape)


def seed_buffer_elements(params: Sequence[Param], dims: Mapping[str, Any], source: str) -> int:
    """The seed workflow's one-size-for-all-buffers rule, but refusing where it would be wrong."""
    ints = sorted((int(dims[p.name]) for p in params if not p.pointer and p.is_integer and p.name in dims), reverse=True)
    if len(ints) > 2:
        raise CaseError(
            f"{source}: solve has {len(ints)} integer dims and ref.py declares no `shapes`; the seed's rule "
            "(largest x second largest) under-allocates 3-D and larger tensors. Declare `shapes` in ref.py, "
            "e.g. shapes = {'a': ('M', 'K'), 'b': ('K', 'N'), 'c': ('M', 'N')}."
        )
    count = SEED_DEFAULT_ELEMENTS if not ints else ints[0] if len(ints) == 1 else ints[0] * ints[1]
    if count > SEED_MAX_ELEMENTS:
        raise CaseError(
            f"{source}: the buffers would hold {count} elements, over the {SEED_MAX_ELEMENTS} the seed capped at "
            "silently. Declare `shapes` in ref.py so each buffer gets its real size."
        )
    return count


def numel(shape: Sequence[int]) -> int:
    return int(math.prod(shape))
