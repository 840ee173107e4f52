"""Buffer shapes, dtypes, input generation and poison values (host side, numpy only)."""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import CaseError
from .cabi import Param
from .expr import DimExpr, DimValue, dim_value, evaluate, integer_at

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
    """Where a buffer's starting values come from: ("normal", mean, std), ("uniform", lo, hi), ("int", lo, hi),
    or ("fill", value, value): every element the same value (an output's declared initial state, e.g. zeros)."""

    kind: str
    a: float
    b: float

    @classmethod
    def parse(cls, name: str, spec: Any) -> Domain:
        return DomainSpec.parse(name, spec, set()).at({})

    @classmethod
    def fill(cls, value: float) -> Domain:
        return cls("fill", float(value), float(value))

    def draw(self, rng: np.random.Generator, size: int) -> np.ndarray:
        if self.kind == "normal":
            return rng.normal(self.a, self.b, size)
        if self.kind == "uniform":
            return rng.uniform(self.a, self.b, size)
        if self.kind == "fill":
            return np.full(size, self.a)
        return rng.integers(int(self.a), int(self.b), size, endpoint=True).astype(np.float64)

    def to_json(self) -> list[Any]:
        return [self.kind, self.a, self.b]


DOMAIN_KINDS = ("normal", "uniform", "int")


@dataclass(frozen=True)
class DomainSpec:
    """A declared input domain whose bounds may be expressions of the dims: ("int", 0, "num_bins - 1")."""

    name: str
    kind: str
    a: DimValue | float
    b: DimValue | float

    @classmethod
    def parse(cls, name: str, spec: Any, known_dims: Mapping[str, Any] | set[str]) -> DomainSpec:
        if not isinstance(spec, (tuple, list)) or len(spec) != 3 or spec[0] not in DOMAIN_KINDS:
            raise CaseError(
                f"ref.py: inputs[{name!r}] = {spec!r} is not a value domain. Use ('normal', mean, std), "
                "('uniform', lo, hi) or ('int', lo, hi); bounds may be expressions of the dims, e.g. "
                "('int', 0, 'num_bins - 1')."
            )
        where = f"ref.py: inputs[{name!r}]"
        bounds = [_bound(value, known_dims, where) for value in spec[1:]]
        return cls(name, str(spec[0]), bounds[0], bounds[1])

    @property
    def depends_on_dims(self) -> bool:
        return isinstance(self.a, DimExpr) or isinstance(self.b, DimExpr)

    def at(self, dims: Mapping[str, Any]) -> Domain:
        a, b = float(evaluate(self.a, dims)), float(evaluate(self.b, dims))
        if self.kind in ("uniform", "int") and a > b:
            raise CaseError(f"ref.py: inputs[{self.name!r}] = ({self.kind!r}, {self.a}, {self.b}) is empty at dims "
                            f"{dict(dims)} ({a:g} > {b:g}); constrain the dims (`dim_ranges`, `relations`) so that "
                            "lo <= hi.")
        return Domain(self.kind, a, b)


def _bound(value: Any, known_dims: Mapping[str, Any] | set[str], where: str) -> DimValue | float:
    if isinstance(value, float):
        return value
    return dim_value(value, known_dims, where)


def default_domain(dtype: str) -> Domain:
    if is_float(dtype):
        return Domain("normal", 0.0, 1.0)
    if dtype == "bool":
        return Domain("int", 0, 1)
    return Domain("int", 0, 16)


def resolve_shapes(
    params: Sequence[Param], shapes: Mapping[str, Any] | None, dims: Mapping[str, Any], source: str
) -> dict[str, tuple[int, ...]]:
    """Element shape of every pointer parameter for these dims. A declared shape is a tuple of ints, dim names and
    expressions of the dims, or one function of the dims returning the tuple."""
    pointers = [p for p in params if p.pointer]
    if shapes:
        return {p.name: _declared_shape(p, shapes, dims, source) for p in pointers}
    count = seed_buffer_elements(params, dims, source)
    return {p.name: (count,) for p in pointers}


def _declared_shape(param: Param, shapes: Mapping[str, Any], dims: Mapping[str, Any], source: str) -> tuple[int, ...]:
    if param.name not in shapes:
        raise CaseError(
            f"ref.py: `shapes` has no entry for pointer parameter {param.name!r} of {source}. "
            f"Add e.g. shapes[{param.name!r}] = ('N',)."
        )
    declared = shapes[param.name]
    where = f"ref.py: shapes[{param.name!r}]"
    if callable(declared) or isinstance(declared, DimExpr):  # the whole shape from a function of the dims
        whole = declared if isinstance(declared, DimExpr) else dim_value(declared, dims, where)
        value = evaluate(whole, dims)
        entries: tuple[Any, ...] = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    else:
        entries = tuple(declared)
    shape = tuple(_extent(entry, dims, where) for entry in entries)
    if any(extent < 0 for extent in shape):
        raise CaseError(
            f"{where} = {_show(declared)} is {shape} at dims {dict(dims)}: a negative extent. A derived size only "
            "makes sense for some dims: declare what must hold in ref.py `relations` (e.g. "
            "relations = ['kernel_size <= input_size']) or bound the dims with expressions in `dim_ranges`."
        )
    return shape


def _extent(entry: Any, dims: Mapping[str, Any], where: str) -> int:
    """One entry of a shape: an int, a dim name, an expression of the dims (string or parsed)."""
    if isinstance(entry, bool):
        raise CaseError(f"{where} uses {entry!r}, which is neither an int nor a dim in {sorted(dims)}.")
    if isinstance(entry, (int, np.integer)):
        return int(entry)
    if isinstance(entry, str) and entry in dims:
        return int(dims[entry])
    if isinstance(entry, (str, DimExpr)) or callable(entry):
        parsed = entry if isinstance(entry, DimExpr) else dim_value(entry, dims, where)
        return integer_at(parsed, dims, where)
    raise CaseError(f"{where} uses {entry!r}, which is neither an int nor a dim in {sorted(dims)}.")


def _show(declared: Any) -> str:
    if isinstance(declared, (tuple, list)):
        return "(" + ", ".join(repr(str(e)) if isinstance(e, DimExpr) else repr(e) for e in declared) + ")"
    return str(declared)


def seed_buffer_elements(params: Sequence[Param], dims: Mapping[str, Any], source: str) -> int:
    """The seed workflow's one-size-for-all-buffers rule, but refusing where it would be wrong."""
    scalars = (p for p in params if not p.pointer and p.is_integer and p.name in dims)
    ints = sorted((int(dims[p.name]) for p in scalars), reverse=True)
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
