"""The dims the correctness check runs a branch at: the deterministic boundary dims (`boundary_dims`: the defaults,
each dim's top, default + 1, just past powers of two, the bottom) and the Hypothesis strategy of drawn dims and
scalars (`dims_strategy`), both within ref.py's `dim_ranges`, `scalar_ranges` and relations."""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..case.expr import DimExpr, integer_at, names_of
from ..case.ref_loader import dependency_order

PRIMES = (2, 3, 5, 7, 11, 13, 17, 31, 61, 127, 251, 509, 1021, 2039, 4093, 8191, 16381, 65521)


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
