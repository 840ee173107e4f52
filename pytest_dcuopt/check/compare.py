"""Comparing kernel outputs with the reference, and the Hypothesis strategies that drive it."""
from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..case.buffers import POISON_BITS, decode, is_float
from ..case.expr import DimExpr, integer_at, names_of
from ..case.reference import dependency_order

# Per-dtype defaults (atol, rtol). float32 keeps the seed workflow's 1e-4 / 1e-3.
DEFAULT_TOLERANCES: dict[str, tuple[float, float]] = {
    "float64": (1e-8, 1e-7),
    "float32": (1e-4, 1e-3),
    "float16": (1e-2, 1e-2),
    "bfloat16": (2e-2, 2e-2),
    "tf32": (1e-3, 2e-3),  # an arithmetic, not a storage type: float32 with inputs rounded to a 10-bit mantissa
}
# Relative L2 error allowed, as a multiple of rtol, on top of the elementwise test: an
# all-zero output must not pass against a small-valued reference just because atol is large.
SCALE_GUARD_FACTOR = 10.0
SCALE_GUARD_FLOOR = 1e-2
PRIMES = (2, 3, 5, 7, 11, 13, 17, 31, 61, 127, 251, 509, 1021, 2039, 4093, 8191, 16381, 65521)


def tolerances(dtype: str, atol: float | None, rtol: float | None,
               arithmetic: str | None = None) -> tuple[float, float]:
    """(atol, rtol) for an output of `dtype`: the declared ones, else the defaults of `arithmetic` (what the case
    accepts it is computed in: ref.py `precision`; the dtype itself by default)."""
    default_atol, default_rtol = DEFAULT_TOLERANCES.get(arithmetic or dtype, DEFAULT_TOLERANCES.get(dtype, (0.0, 0.0)))
    if not is_float(dtype):
        return (0.0, 0.0) if atol is None else (atol, rtol or 0.0)
    return (default_atol if atol is None else atol, default_rtol if rtol is None else rtol)


@dataclass(frozen=True)
class Mismatch:
    output: str
    dtype: str
    reason: str
    bad: int
    total: int
    unwritten: int  # NaN/sentinel where the reference has a value
    max_abs_err: float
    worst: tuple[dict[str, Any], ...]
    atol: float
    rtol: float
    bound: str = ""  # a per-element allowance on top of atol + rtol*|r| (a float reduction's error bound)

    def describe(self) -> str:
        extra = f" + {self.bound}" if self.bound else ""
        lines = [f"output {self.output!r} ({self.dtype}): {self.reason}; {self.bad} of {self.total} elements outside "
                 f"|k - r| <= {self.atol:g} + {self.rtol:g}*|r|{extra} ({self.unwritten} never written / NaN); "
                 f"max |k - r| = {self.max_abs_err:.6g}"]
        lines += [f"    at {w['index']}: kernel={w['kernel']!r} reference={w['reference']!r} |diff|={w['abs_err']!r}"
                  for w in self.worst]
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        data["worst"] = list(self.worst)
        data["max_abs_err"] = _num(self.max_abs_err)  # inf -> "inf": state.json stays strict JSON
        return data


COMPARE_CHUNK = 1 << 20  # elements per pass: the float64 temporaries stay in cache (32M-element outputs compared
# in one piece made a dozen 256 MB temporaries, ~2-3 s per output on a busy host)


def compare(output: str, kernel: np.ndarray, reference: np.ndarray, dtype: str, shape: Sequence[int],
            atol: float, rtol: float, worst_count: int = 5, bound: np.ndarray | None = None,
            bound_rule: str = "") -> Mismatch | None:
    """Elementwise tolerance test plus a scale-aware guard; None when the output matches.

    `bound`: a per-element allowance added to atol + rtol*|r| (`bound_rule` says in words what it is).
    Computed in chunks of COMPARE_CHUNK elements; the result is the same as one pass over the whole output.
    """
    k_all, r_all = kernel.ravel(), reference.ravel()
    b_all = None if bound is None else np.broadcast_to(np.asarray(bound, dtype=np.float64).ravel(), r_all.shape)
    bad = unwritten = 0
    max_err = 0.0
    sum_r2 = sum_d2 = 0.0
    candidates: list[tuple[float, int]] = []
    for begin in range(0, max(k_all.size, 1), COMPARE_CHUNK):
        k = k_all[begin:begin + COMPARE_CHUNK].astype(np.float64)
        r = r_all[begin:begin + COMPARE_CHUNK].astype(np.float64, copy=False)
        if not k.size:
            break
        with np.errstate(over="ignore", invalid="ignore"):
            diff = np.subtract(k, r)
            np.abs(diff, out=diff)
            sum_r2 += float(np.dot(r, r))
            sum_d2 += float(np.dot(diff, diff))  # |k - r| squared is (k - r) squared
            allowed = np.abs(r)
            allowed *= rtol
            allowed += atol
            if b_all is not None:
                allowed += b_all[begin:begin + COMPARE_CHUNK]
            bad_mask = ~(diff <= allowed)  # NaN differences are not <=: bad unless both are NaN (below)
        largest = float(np.max(diff))
        max_err = max(max_err, largest if math.isfinite(largest) else math.inf)  # NaN or inf: inf
        if not bad_mask.any():  # the common case: no element of the chunk is outside its tolerance
            continue
        bad_mask &= ~(np.isnan(k) & np.isnan(r))
        bad += int(np.count_nonzero(bad_mask))
        unwritten += int(np.count_nonzero(~np.isfinite(k) & np.isfinite(r)))  # such an element is always bad
        where = np.flatnonzero(bad_mask)
        candidates += _worst_in_chunk(_finite_or_inf(diff[where]), where + begin, worst_count)
    if bad:
        reason = "values differ"
    else:
        guard = _scale_guard_from_sums(sum_r2, sum_d2, rtol, 0.0 if bound is None else float(np.linalg.norm(bound)))
        if guard is None:
            return None
        reason = guard
        candidates = []  # every element is "within tolerance": show the largest errors
        for begin in range(0, k_all.size, COMPARE_CHUNK):
            diff = np.abs(k_all[begin:begin + COMPARE_CHUNK].astype(np.float64)
                          - r_all[begin:begin + COMPARE_CHUNK].astype(np.float64))
            candidates += _worst_in_chunk(_finite_or_inf(diff), np.arange(begin, begin + diff.size), worst_count)
    order = [index for value, index in sorted(candidates, key=lambda c: (-c[0], c[1]))[:worst_count] if value >= 0]
    worst = tuple(
        {"index": _index(i, shape), "kernel": _num(k_all[i]), "reference": _num(r_all[i]),
         "abs_err": _num(abs(float(k_all[i]) - float(r_all[i])))}
        for i in order
    )
    return Mismatch(output, dtype, reason, bad, int(k_all.size), unwritten, max_err, worst, atol, rtol,
                    bound_rule if bound is not None else "")


def _worst_in_chunk(scores: np.ndarray, indices: np.ndarray, count: int) -> list[tuple[float, int]]:
    """The `count` highest scores (ties: the lower index first) as (score, global index); `indices` are the global
    indices of `scores`, ascending. A partition first: a full sort of a million-element chunk took longer than the
    whole tolerance test."""
    if scores.size > count:
        kth = np.partition(scores, scores.size - count)[scores.size - count]  # the count-th highest score
        keep = np.flatnonzero(scores >= kth)  # ties at kth may be more than needed: the stable sort keeps the lowest
        scores, indices = scores[keep], indices[keep]
    top = np.argsort(-scores, kind="stable")[:count]
    return [(float(scores[i]), int(indices[i])) for i in top]


def _finite_or_inf(values: np.ndarray) -> np.ndarray:
    """NaN and infinite errors rank as the largest."""
    return np.where(np.isfinite(values), values, np.inf)


def _scale_guard_from_sums(sum_r2: float, sum_d2: float, rtol: float, bound_norm: float = 0.0) -> str | None:
    """The relative L2 error against max(10 * rtol, 1e-2), from the sums of squares of the reference and of the
    error; a declared error bound (its L2 norm) is allowed on top."""
    norm = math.sqrt(sum_r2) if sum_r2 >= 0 else float("nan")
    if norm == 0.0 or not math.isfinite(norm):
        return None
    error = math.sqrt(sum_d2) if sum_d2 >= 0 else float("nan")
    rel = error / norm
    limit = max(SCALE_GUARD_FACTOR * rtol, SCALE_GUARD_FLOOR)
    if error > limit * norm + bound_norm:
        return (f"relative L2 error {rel:.3g} exceeds {limit:.3g} although every element is within atol "
                "(the outputs are tiny compared with atol: the scale-aware guard caught it)")
    return None


def never_written_under_nan(output: str, stored: np.ndarray, reference: np.ndarray, dtype: str, shape: Sequence[int],
                            atol: float, rtol: float, worst_count: int = 5) -> Mismatch | None:
    """Elements that still hold the NaN poison where the reference is NaN (`log(x)` at x < 0): `compare` takes two
    NaNs as equal, so only the bits tell that the kernel never wrote them. None for a non-float output, a
    reference without NaN, or an output written everywhere."""
    if dtype not in POISON_BITS or stored.dtype.itemsize not in (2, 4, 8):
        return None
    expected = reference.ravel()
    nan_at = np.isnan(expected)
    if not nan_at.any():
        return None
    bits = np.ascontiguousarray(stored).ravel().view(f"uint{8 * stored.dtype.itemsize}")
    found = np.flatnonzero((bits == POISON_BITS[dtype]) & nan_at)
    if not found.size:
        return None
    worst = tuple({"index": _index(int(i), shape), "kernel": "never written", "reference": "nan", "abs_err": "nan"}
                  for i in found[:worst_count])
    reason = (f"never written where the reference is NaN: {found.size} elements still hold the harness's NaN poison, "
              "which a NaN reference cannot tell from a result, so they were compared by their bits. Write every "
              "element of the output (NaN where the result is NaN)")
    return Mismatch(output, dtype, reason, int(found.size), int(stored.size), int(found.size), math.inf, worst, atol,
                    rtol)


def _index(flat: int, shape: Sequence[int]) -> Any:
    if len(shape) <= 1:
        return flat
    return list(int(v) for v in np.unravel_index(flat, tuple(shape)))


def _num(value: Any) -> Any:
    value = float(value)
    if math.isnan(value) or math.isinf(value):
        return str(value)
    return value


def decode_all(arrays: Mapping[str, np.ndarray], dtypes: Mapping[str, str]) -> dict[str, np.ndarray]:
    return {name: decode(array, dtypes[name]) for name, array in arrays.items()}


def special_values(lo: int, hi: int, multiple: int) -> list[int]:
    """Boundary, prime and off-by-one-of-a-power-of-two values inside [lo, hi]: where tails break kernels."""
    candidates = {lo, lo + 1, hi, hi - 1, 1, *PRIMES}
    power = 2
    while power <= hi + 1:
        candidates |= {power - 1, power, power + 1}
        power *= 2
    values = sorted(v for v in candidates if lo <= v <= hi and v % multiple == 0)
    return values or [lo - lo % multiple + (multiple if lo % multiple else 0)]


def range_at(dim: str, spec: Sequence[Any], dims: Mapping[str, Any]) -> tuple[int, int, int]:
    """(lo, hi, multiple) of a ranged dim, its bounds evaluated at `dims` (they may be expressions of other dims)."""
    where = f"ref.py: dim_ranges[{dim!r}]"
    return integer_at(spec[0], dims, where), integer_at(spec[1], dims, where), _multiple(tuple(spec))


def holds(relations: Sequence[DimExpr], dims: Mapping[str, Any]) -> bool:
    return all(bool(relation.evaluate(dims)) for relation in relations)


def dims_strategy(dim_ranges: Mapping[str, tuple[Any, ...]], fixed: Mapping[str, Any],
                  relations: Sequence[DimExpr] = (),
                  scalar_ranges: Mapping[str, tuple[float, float]] | None = None, upper: bool = False) -> Any:
    """Hypothesis strategy over dims dicts: mostly uniform draws, often boundary values, shrinking to small.

    Dims whose bounds name other dims are drawn after them (dependency order), with their bounds evaluated at
    the values drawn; `relations` filter the draws (an impossible range rejects the draw as well). Float scalars
    with a range in `scalar_ranges` are drawn from it (`_one_scalar`); the others keep their value in `fixed`.
    `upper`: a third of the integer draws come from the upper half of each range (Hypothesis favours small
    integers, so uniform draws alone rarely come near a range's top; the long profile asks for it).
    """
    from hypothesis import strategies as st

    ranged = {dim: spec for dim, spec in dim_ranges.items() if dim in fixed}
    scalars = {dim: bounds for dim, bounds in (scalar_ranges or {}).items() if dim in fixed}
    dependent = any(isinstance(bound, DimExpr) for spec in ranged.values() for bound in spec[:2])
    if not dependent and not relations:
        parts = {dim: _one_dim(*range_at(dim, ranged[dim], fixed), upper) if dim in ranged else
                 _one_scalar(float(default), *scalars[dim]) if dim in scalars else st.just(default)
                 for dim, default in fixed.items()}
        return st.fixed_dictionaries(parts)
    order = dependency_order(ranged)

    @st.composite
    def related_dims(draw: Any) -> dict[str, Any]:
        from hypothesis import assume

        dims = dict(fixed)
        for dim in order:
            lo, hi, multiple = range_at(dim, ranged[dim], dims)
            assume(lo <= hi and -(-lo // multiple) <= hi // multiple)  # a range emptied by the dims drawn before
            dims[dim] = draw(_one_dim(lo, hi, multiple, upper))
        for dim, (low, high) in scalars.items():
            dims[dim] = draw(_one_scalar(float(fixed[dim]), low, high))
        assume(holds(relations, dims))
        return dims

    return related_dims()


def _one_scalar(default: float, lo: float, hi: float) -> Any:
    """A float scalar: its special values (`scalar_values`) or a float32-representable value in [lo, hi], so that a
    float kernel parameter and the float64 reference see the same number."""
    from hypothesis import strategies as st

    within = st.floats(_float32_inward(lo, up=True), _float32_inward(hi, up=False), allow_nan=False,
                       allow_infinity=False, width=32)
    return st.one_of(st.sampled_from([default, *scalar_values(default, lo, hi)]), within)


def _float32_inward(value: float, up: bool) -> float:
    """The float32 nearest `value` on the inside of a range ending there (up: not below it; else not above it)."""
    rounded = float(np.float32(value))
    if (up and rounded < value) or (not up and rounded > value):
        rounded = float(np.nextafter(np.float32(rounded), np.float32(np.inf if up else -np.inf)))
    return rounded


def scalar_values(default: float, lo: float, hi: float) -> list[float]:
    """A float scalar's deterministic values beside its default, in the order they run: the top and the bottom of
    its range, then 0 and the default's negation where the range holds them (a kernel that drops a term or a sign
    shows there). Float32-representable, the default itself left out."""
    candidates = [_float32_inward(hi, up=False), _float32_inward(lo, up=True)]
    candidates += [value for value in (0.0, -default) if lo <= value <= hi]
    return [v for v in dict.fromkeys(candidates) if lo <= v <= hi and v != default]


def _one_dim(lo: int, hi: int, multiple: int, upper: bool = False) -> Any:
    from hypothesis import strategies as st

    low, high = -(-lo // multiple), hi // multiple
    uniform = st.integers(low, high).map(_times(multiple))
    specials = st.sampled_from(special_values(lo, hi, multiple))
    if not upper:
        return st.one_of(uniform, specials)
    top_half = st.integers(max(low, (low + high + 1) // 2), high).map(_times(multiple))
    return st.one_of(uniform, top_half, specials)


def boundary_values(default: int, lo: int, hi: int, multiple: int = 1) -> list[int]:
    """One ranged dim's deterministic values, in the order they run (the default itself excluded):
    the top of the range and one step below it, default + 1 step, just past each power of two near the
    default (2^k + 1 for 2^k in [default/2, 2*default]), the bottom. All are multiples of `multiple`
    inside [lo, hi]: these are the sizes where fixed grids, tails and block rounding break kernels."""
    step = max(1, multiple)
    top = hi // step * step
    candidates = [top, top - step, _round_up(default + 1, step)]
    power = 1
    while power <= 2 * default:
        if 2 * power >= default:  # power >= default / 2
            candidates.append(_round_up(power + 1, step))
        power *= 2
    candidates.append(_round_up(lo, step))
    chosen = [v for v in candidates if lo <= v <= hi and v != default]
    return list(dict.fromkeys(chosen))


def _multiple(spec: tuple[int, ...]) -> int:
    return max(1, spec[2]) if len(spec) > 2 else 1


def _round_up(value: int, step: int) -> int:
    return -(-value // step) * step


# Deterministic examples per branch before Hypothesis draws: one dim varied at a time (about 6 values each)
# plus the all-max combination; a case with many ranged dims is trimmed to this many, fairly across dims.
MAX_BOUNDARY_EXAMPLES = 24


def boundary_dims(defaults: Mapping[str, Any], dim_ranges: Mapping[str, tuple[Any, ...]],
                  limit: int = MAX_BOUNDARY_EXAMPLES, relations: Sequence[DimExpr] = (),
                  scalar_ranges: Mapping[str, tuple[float, float]] | None = None) -> list[dict[str, Any]]:
    """The deterministic dims run before Hypothesis, in order: the defaults, then for each ranged dim its
    `boundary_values` (for a float scalar with a range in `scalar_ranges`: its `scalar_values`) with every other
    dim at its default, then every ranged integer dim at its top at once.

    Bounds that are expressions of other dims are evaluated at the example's dims: a dim whose range moved
    with the varied dim is clamped into it (kernel_size follows input_size down), and an example that breaks
    a declared relation is left out.
    """
    ranged = {dim: spec for dim, spec in dim_ranges.items() if dim in defaults and isinstance(defaults[dim], int)}
    order = dependency_order(ranged)
    per_dim: dict[str, list[Any]] = {}
    for dim in order:
        lo, hi, multiple = range_at(dim, ranged[dim], defaults)
        per_dim[dim] = boundary_values(int(defaults[dim]), lo, hi, multiple) if lo <= hi else []
    for dim, (low, high) in (scalar_ranges or {}).items():
        if dim in defaults and not isinstance(defaults[dim], int):
            per_dim[dim] = scalar_values(float(defaults[dim]), low, high)
    extra = 1 if len(ranged) > 1 else 0
    per_dim = _trim_fairly(per_dim, max(0, limit - 1 - extra))
    examples = [dict(defaults)]
    for dim, values in per_dim.items():
        examples += [settled for value in values
                     if (settled := _settle({**defaults, dim: value}, dim, ranged, order)) is not None]
    if extra and (all_max := _all_max(defaults, ranged, order)) is not None:
        examples.append(all_max)
    unique: list[dict[str, Any]] = []
    for dims in examples:
        if dims not in unique and holds(relations, dims):
            unique.append(dims)
    return unique


def _settle(dims: dict[str, Any], changed: str, ranged: Mapping[str, tuple[Any, ...]],
            order: Sequence[str]) -> dict[str, Any] | None:
    """Clamp every dim whose bounds (transitively) name `changed` into its range at `dims`; None if one is empty."""
    moved = {changed}
    for dim in order:
        if not (names_of(ranged[dim][0]) | names_of(ranged[dim][1])) & moved:
            continue
        lo, hi, multiple = range_at(dim, ranged[dim], dims)
        clamped = _clamp(int(dims[dim]), lo, hi, multiple)
        if clamped is None:
            return None
        if clamped != dims[dim]:
            dims[dim] = clamped
            moved.add(dim)
    return dims


def _all_max(defaults: Mapping[str, Any], ranged: Mapping[str, tuple[Any, ...]],
             order: Sequence[str]) -> dict[str, Any] | None:
    dims = dict(defaults)
    for dim in order:
        lo, hi, multiple = range_at(dim, ranged[dim], dims)
        top = hi // multiple * multiple
        if top < lo:
            return None
        dims[dim] = top
    return dims


def _clamp(value: int, lo: int, hi: int, multiple: int) -> int | None:
    """`value` moved into [lo, hi] on a multiple of `multiple`; None when the range holds no such value."""
    low, high = _round_up(lo, multiple), hi // multiple * multiple
    if low > high:
        return None
    return min(max(value, low), high)


def _trim_fairly(per_dim: Mapping[str, list[Any]], budget: int) -> dict[str, list[Any]]:
    """At most `budget` values in all, shared round-robin across dims in `_by_trim_priority` order."""
    if sum(len(v) for v in per_dim.values()) <= budget:
        return {dim: list(values) for dim, values in per_dim.items()}
    ranked = {dim: _by_trim_priority(values) for dim, values in per_dim.items()}
    kept: dict[str, set[Any]] = {dim: set() for dim in per_dim}
    for rank in range(max((len(v) for v in per_dim.values()), default=0)):
        for dim, values in ranked.items():
            if rank < len(values) and budget > 0:
                kept[dim].add(values[rank])
                budget -= 1
    return {dim: [v for v in values if v in kept[dim]] for dim, values in per_dim.items()}


def _by_trim_priority(values: list[Any]) -> list[Any]:
    """A dim's `boundary_values` in the order they survive trimming: the top, the bottom, then the rest in order."""
    return list(values) if len(values) < 2 else [values[0], values[-1], *values[1:-1]]


def _times(multiple: int) -> Callable[[int], int]:
    def scaled(k: int) -> int:
        return k * multiple

    return scaled


def reproduce_command(nodeid: str, dims: Mapping[str, Any] | None = None, seed: int | None = None,
                      extra: Sequence[str] = ()) -> str:
    """A shell command that re-runs one test, with this interpreter (works without an activated venv).

    Every value is single-quoted (`extra` arguments too), so the command runs as printed whatever the node id
    holds: spaces, quotes, `$(...)`, backticks, newlines. It is meant to be run from pytest's rootdir.
    """
    parts = [_single_quoted(sys.executable), "-m", "pytest", _single_quoted(nodeid)]
    if dims is not None:
        parts.append("--dcuopt-dims=" + _single_quoted(json.dumps(dict(dims), separators=(",", ":"))))
    if seed is not None:
        parts.append(f"--dcuopt-seed={int(seed)}")
    return " ".join([*parts, *(_single_quoted(argument) for argument in extra)])


def _single_quoted(text: str) -> str:
    """`text` in POSIX single quotes (always quoted, so the command reads the same for every node id)."""
    return "'" + text.replace("'", "'\"'\"'") + "'"
