"""Buffer shapes, dtypes, input generation and poison values (host side, numpy only)."""
from __future__ import annotations

import math
import os
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


# The float poison's bits: quiet NaNs with a payload no arithmetic produces (a NaN computed by a CPU or a GPU has
# none), so an element that still holds them was never written even where the reference is NaN too.
POISON_BITS: dict[str, int] = {"bfloat16": 0x7FC1, "float16": 0x7E0D, "float32": 0x7FC00D0F,
                               "float64": 0x7FF8000000000D0F}


def poison_value(dtype: str) -> Any:
    """NaN for floats (`POISON_BITS`), an unlikely sentinel for integers: unwritten elements then fail the
    comparison."""
    if dtype == "bfloat16":
        return np.uint16(POISON_BITS[dtype])
    if is_float(dtype):
        return np.array(POISON_BITS[dtype], f"uint{8 * np.dtype(dtype).itemsize}").view(dtype)[()]
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
    or ("fill", value, value): every element the same value (an output's declared initial state, e.g. zeros).

    `specials`: (value, fraction) pairs: that fraction of the elements, drawn at random, holds the value instead
    (-inf in an attention mask, denormals, huge values), each element independently."""

    kind: str
    a: float
    b: float
    specials: tuple[tuple[float, float], ...] = ()

    @classmethod
    def parse(cls, name: str, spec: Any) -> Domain:
        return DomainSpec.parse(name, spec, set()).at({})

    @classmethod
    def fill(cls, value: float) -> Domain:
        return cls("fill", float(value), float(value))

    def draw(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return self._sprinkle(rng, self._draw_base(rng, size))

    def _draw_base(self, rng: np.random.Generator, size: int) -> np.ndarray:
        if self.kind == "normal":
            return rng.normal(self.a, self.b, size)
        if self.kind == "uniform":
            return rng.uniform(self.a, self.b, size)
        if self.kind == "fill":
            return np.full(size, self.a)
        return rng.integers(int(self.a), int(self.b), size, endpoint=True).astype(np.float64)

    def _sprinkle(self, rng: np.random.Generator, values: np.ndarray) -> np.ndarray:
        """`specials` laid over drawn values (in place; a flat array): one uniform number per element picks the
        special value whose slice of [0, 1) holds it, or none."""
        if not self.specials:
            return values
        pick = rng.random(values.size)
        start = 0.0
        for value, fraction in self.specials:
            values[(pick >= start) & (pick < start + fraction)] = value
            start += fraction
        return values

    def draw_into(self, rng: np.random.Generator, out: np.ndarray, dtype: str) -> None:
        """`out[...] = encode(self.draw(rng, out.size), dtype)`, the same values and the same generator state after,
        drawn in chunks: at 32M elements the whole-buffer float64 draw and its conversion cost more in fresh memory
        than the draw itself."""
        for start in range(0, out.size, DRAW_CHUNK):
            part = out[start:start + DRAW_CHUNK]
            part[...] = encode(self.draw(rng, part.size), dtype)

    def redraw_into(self, rng: np.random.Generator, out: np.ndarray, dtype: str) -> None:
        """Fill `out` (a buffer's storage) with other values from this domain, fast: for the anti-cheat call on new
        inputs, whose values no record reproduces. Uniform draws in the storage precision: within [lo, hi] for
        "uniform", within two standard deviations of the mean for "normal" (a normal draw is 6x slower); integers
        as `draw`. 0.04 s for 32M float32 values instead of 0.5 s."""
        if self.kind in ("fill", "int"):
            self.draw_into(rng, out, dtype)
            return
        low, high = (self.a - 2 * self.b, self.a + 2 * self.b) if self.kind == "normal" else (self.a, self.b)
        if out.dtype in (np.dtype(np.float32), np.dtype(np.float64)) and out.flags.c_contiguous:
            rng.random(dtype=out.dtype.type, out=out)
            target = out
        else:
            target = rng.random(out.size, dtype=np.float32)
        target *= target.dtype.type(high - low)
        target += target.dtype.type(low)
        np.clip(target, target.dtype.type(low), target.dtype.type(high), out=target)  # rounding stays inside
        if self.specials:
            self._sprinkle(rng, target.reshape(-1))
        if target is not out:
            out[...] = encode(target, dtype)

    def to_json(self) -> list[Any]:
        """[kind, a, b] (+ {value: fraction} of its specials; non-finite values as strings: strict JSON)."""
        found: list[Any] = [self.kind, self.a, self.b]
        if self.specials:
            found.append({(repr(v) if not math.isfinite(v) else str(v)): f for v, f in self.specials})
        return found


DOMAIN_KINDS = ("normal", "uniform", "int")
DRAW_CHUNK = 1 << 20  # elements per draw in `Domain.draw_into` (8 MB of float64)


@dataclass(frozen=True)
class DomainSpec:
    """A declared input domain whose bounds may be expressions of the dims: ("int", 0, "num_bins - 1")."""

    name: str
    kind: str
    a: DimValue | float
    b: DimValue | float
    specials: tuple[tuple[float, float], ...] = ()

    @classmethod
    def parse(cls, name: str, spec: Any, known_dims: Mapping[str, Any] | set[str],
              where: str | None = None) -> DomainSpec:
        where = where or f"ref.py: inputs[{name!r}]"
        if not isinstance(spec, (tuple, list)) or len(spec) not in (3, 4) or spec[0] not in DOMAIN_KINDS:
            raise CaseError(
                f"{where} = {spec!r} is not a value domain. Use ('normal', mean, std), "
                "('uniform', lo, hi) or ('int', lo, hi); bounds may be expressions of the dims, e.g. "
                "('int', 0, 'num_bins - 1'); a fourth entry {value: fraction} puts special values in, e.g. "
                "('normal', 0.0, 1.0, {float('-inf'): 0.1})."
            )
        bounds = [_bound(value, known_dims, where) for value in spec[1:3]]
        specials = _specials(spec[3], str(spec[0]), where) if len(spec) == 4 else ()
        found = cls(name, str(spec[0]), bounds[0], bounds[1], specials)
        if not found.depends_on_dims:
            found.at({})  # constant bounds: refuse a bad domain now, not on the first call
        return found

    @property
    def depends_on_dims(self) -> bool:
        return isinstance(self.a, DimExpr) or isinstance(self.b, DimExpr)

    def at(self, dims: Mapping[str, Any]) -> Domain:
        a, b = float(evaluate(self.a, dims)), float(evaluate(self.b, dims))
        shown = f"ref.py: inputs[{self.name!r}] = ({self.kind!r}, {self.a}, {self.b})"
        at = f" at dims {dict(dims)}" if dims else ""
        if not (math.isfinite(a) and math.isfinite(b)):
            raise CaseError(f"{shown} has a bound that is not a finite number ({a:g}, {b:g}){at}; draws from it would "
                            "be NaN or inf. Give finite bounds, e.g. ('uniform', -1.0, 1.0).")
        if self.kind in ("uniform", "int") and a > b:
            raise CaseError(f"{shown} is empty{at} ({a:g} > {b:g}): lo must be <= hi. Swap the bounds, or constrain "
                            "the dims (`dim_ranges`, `relations`) so that lo <= hi.")
        if self.kind == "normal" and b < 0:
            raise CaseError(f"{shown}: the standard deviation {b:g}{at} is negative. ('normal', mean, std) needs "
                            "std >= 0, e.g. ('normal', 0.0, 1.0).")
        if self.kind == "int":
            _check_int_bounds(shown, a, b, at)
        return Domain(self.kind, a, b, self.specials)


def _specials(declared: Any, kind: str, where: str) -> tuple[tuple[float, float], ...]:
    """A domain's {value: fraction}: values that are numbers (not NaN: NaN is the unwritten-output poison; whole
    numbers for an "int" domain), fractions in (0, 1] adding up to at most 1."""
    problem = (f"{where}: the fourth entry {declared!r} must be {{value: fraction}}, e.g. {{float('-inf'): 0.1, "
               "1e-40: 0.05}} (values: numbers other than NaN, whole numbers for 'int'; fractions in (0, 1], "
               "adding up to at most 1)")
    if not isinstance(declared, dict) or not declared:
        raise CaseError(problem)
    found = []
    for value, fraction in declared.items():
        numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (value, fraction))
        if not numbers or math.isnan(value) or not 0 < fraction <= 1 or \
                (kind == "int" and not (math.isfinite(value) and float(value).is_integer())):
            raise CaseError(problem)
        found.append((float(value), float(fraction)))
    if sum(fraction for _, fraction in found) > 1:
        raise CaseError(problem)
    return tuple(found)


# ("int", lo, hi) draws int64 values: bounds must be integers inside its range.
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def _check_int_bounds(shown: str, a: float, b: float, at: str) -> None:
    if not (a.is_integer() and b.is_integer()):
        raise CaseError(f"{shown}: ('int', lo, hi) draws integers, but the bounds ({a:g}, {b:g}){at} are not whole "
                        "numbers. Give integer bounds, or use ('uniform', lo, hi) for real values.")
    if a < INT64_MIN or b > INT64_MAX:
        raise CaseError(f"{shown}: the bounds ({a:g}, {b:g}){at} do not fit 64-bit integers, which is what is drawn "
                        "(and no C integer buffer holds more). Narrow them to the values the kernel must handle.")


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
    check_scalar_values(params, dims, source)
    pointers = [p for p in params if p.pointer]
    if shapes:
        found = {p.name: _declared_shape(p, shapes, dims, source) for p in pointers}
    else:
        count = seed_buffer_elements(params, dims, source)
        found = {p.name: (count,) for p in pointers}
    check_fits_in_memory(pointers, found, dims, source)
    return found


def check_scalar_values(params: Sequence[Param], dims: Mapping[str, Any], source: str) -> None:
    """A dim passed to an integer parameter must be a whole number its C type holds (ctypes would refuse a
    fraction with a traceback, and a value past INT_MAX would wrap around silently)."""
    for param in params:
        if param.pointer or not param.is_integer or param.name not in dims:
            continue
        value = dims[param.name]
        if isinstance(value, float) and not value.is_integer():
            raise CaseError(f"{source}: `{param.declaration}` is an integer parameter, but its dim {param.name} = "
                            f"{value!r} is not a whole number. Give an integer in dims.json (or declare the parameter "
                            "`float`/`double`).")
        info = np.iinfo(np.dtype(param.dtype))
        if not info.min <= int(value) <= info.max:
            raise CaseError(f"{source}: {param.name} = {int(value)} does not fit `{param.declaration}` "
                            f"({param.dtype}: {info.min}..{info.max}); the kernel would see a wrapped-around value. "
                            "Lower the dim (dims.json, dim_ranges) or declare the parameter with a wider type "
                            "(int64_t, size_t).")


def memory_bytes() -> int | None:
    """This machine's physical memory in bytes (None where the OS does not say)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, OSError, ValueError):
        return None


# Bytes the harness holds per element of a buffer beyond the buffer itself: the float64/int64 copy the reference
# is computed and compared in.
CHECK_COPY_BYTES = 8


def check_fits_in_memory(pointers: Sequence[Param], shapes: Mapping[str, tuple[int, ...]], dims: Mapping[str, Any],
                         source: str, available: int | None = None) -> None:
    """Refuse, before anything is allocated, buffers that cannot fit in this machine's memory: the estimate is each
    buffer (with its guard zone) plus the 8-byte copy the reference is checked with."""
    available = memory_bytes() if available is None else available
    if available is None:
        return
    sizes = {p.name: (numel(shapes[p.name]) + GUARD_ELEMENTS) * (storage_dtype(p.dtype).itemsize + CHECK_COPY_BYTES)
             for p in pointers}
    needed = sum(sizes.values())
    if needed > available:
        largest = sorted(sizes, key=sizes.__getitem__, reverse=True)[:3]
        detail = ", ".join(f"{name} {shapes[name]}" for name in largest)
        raise CaseError(f"{source}: the buffers at dims {dict(dims)} need about {_gib(needed)} ({detail}), more than "
                        f"this machine's {_gib(available)} of memory; nothing was allocated. Lower the sizes in "
                        "dims.json (the timed dims) or the upper bounds in `dim_ranges` (the drawn dims).")


def _gib(count: int) -> str:
    return f"{count / 2**30:.3g} GiB"


def declared_shape(name: str, declared: Any, dims: Mapping[str, Any], where: str) -> tuple[int, ...]:
    """One declared shape (a tuple of extents, or a function of the dims giving one) at `dims`; a negative extent
    is refused, naming the dims."""
    if callable(declared) or isinstance(declared, DimExpr):  # the whole shape from a function of the dims
        whole = declared if isinstance(declared, DimExpr) else dim_value(declared, dims, where)
        value = evaluate(whole, dims)
        entries: tuple[Any, ...] = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    else:
        entries = tuple(declared)
    shape = tuple(_extent(entry, dims, where) for entry in entries)
    negative_dims = {e: dims[e] for e in entries if isinstance(e, str) and e in dims and dims[e] < 0}
    if negative_dims:
        raise CaseError(f"{where} = {_show(declared)} is {shape} at dims {dict(dims)}: "
                        f"{', '.join(f'{k} = {v}' for k, v in negative_dims.items())} is negative, and a buffer "
                        "cannot have a negative size. Give dims.json (and `dim_ranges`) sizes >= 0.")
    if any(extent < 0 for extent in shape):
        raise CaseError(
            f"{where} = {_show(declared)} is {shape} at dims {dict(dims)}: a negative extent. A derived size only "
            "makes sense for some dims: declare what must hold in ref.py `relations` (e.g. "
            "relations = ['kernel_size <= input_size']) or bound the dims with expressions in `dim_ranges`."
        )
    return shape


def _declared_shape(param: Param, shapes: Mapping[str, Any], dims: Mapping[str, Any], source: str) -> tuple[int, ...]:
    if param.name not in shapes:
        raise CaseError(
            f"ref.py: `shapes` has no entry for pointer parameter {param.name!r} of {source}. "
            f"Add e.g. shapes[{param.name!r}] = ('N',)."
        )
    return declared_shape(param.name, shapes[param.name], dims, f"ref.py: shapes[{param.name!r}]")


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
    if ints and ints[-1] < 0:
        negative = {p.name: dims[p.name] for p in params if not p.pointer and p.name in dims and dims[p.name] < 0}
        raise CaseError(f"{source}: dims {negative} are negative; without `shapes` in ref.py the buffers are sized "
                        "from the integer dims, and a buffer cannot have a negative size. Give sizes >= 0 in "
                        "dims.json, or declare `shapes`.")
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
