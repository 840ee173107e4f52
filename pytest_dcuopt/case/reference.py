"""A case's reference as ref.py declares it (`Reference`: the function, shapes, inputs, tolerances, relations...) and
the figures it gives at given dims (tolerances, the float reduction's error bound, throughput). `ref_loader` reads
ref.py into one."""
from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from ..errors import CaseError
from .buffers import Domain, DomainSpec, is_float
from .expr import DimExpr, DimValue, evaluate

# The reduction error bound: |error| <= REDUCTION_BOUND_FACTOR * u * (magnitude + sqrt(length) * |reference|).
REDUCTION_BOUND_FACTOR = 8.0
# Unit roundoff of each arithmetic; "tf32" is float32 with inputs rounded to a 10-bit mantissa (tensor cores).
ROUNDING_UNIT = {"float64": 2.0**-53, "float32": 2.0**-24, "tf32": 2.0**-11, "float16": 2.0**-11,
                 "bfloat16": 2.0**-8}
# `rtol_scale = "sqrt_reduction"`: rtol grows with sqrt(length / SQRT_REDUCTION_BASE) above that length.
SQRT_REDUCTION_BASE = 1024


@dataclass
class Reference:
    """The loaded ref.py and its declared contract.

    `atol`, `rtol` and `inputs` are the values at the dims ref.py was loaded with (the case's default dims):
    the stages that only ever run there read them. Anything checked at other dims uses `tolerances_at` and
    `starting_domains`, which evaluate the declarations (functions and expressions of the dims) at those dims.
    """

    path: Path
    module: ModuleType
    function: Callable[..., Any]
    atol: float | None
    rtol: float | None
    shapes: dict[str, Any] | None
    dim_ranges: dict[str, tuple[DimValue, ...]]  # integer dims
    inputs: dict[str, Domain]
    flops: Callable[..., float] | None
    bytes_moved: Callable[..., float] | None
    input_specs: dict[str, DomainSpec] = field(default_factory=dict)
    initial: dict[str, float] = field(default_factory=dict)  # outputs that start filled (not poisoned)
    relations: tuple[DimExpr, ...] = ()
    atol_spec: float | DimExpr | None = None
    rtol_spec: float | DimExpr | None = None
    reduction: DimValue | None = None
    rtol_scale: str | None = None
    precision: str | None = None  # ref.py `precision`: an arithmetic less precise than the dtype, accepted
    # Float scalars (a float in dims.json: alpha, beta, eps): (lo, hi) they are drawn from, declared in `dim_ranges`
    # or around the default (`default_scalar_range`).
    scalar_ranges: dict[str, tuple[float, float]] = field(default_factory=dict)
    # ref.py `input_sets`: more input distributions than `inputs` (name -> the domains it lays over `inputs`).
    input_sets: dict[str, dict[str, DomainSpec]] = field(default_factory=dict)

    def arithmetic(self, dtype: str) -> str:
        """What a float output of `dtype` is judged as computed in: the dtype itself, or the declared `precision`
        where that is coarser (a float32 output of a case that accepts tf32 is judged as tf32 arithmetic)."""
        if self.precision is None or not is_float(dtype) or \
                ROUNDING_UNIT[self.precision] <= ROUNDING_UNIT.get(dtype, 0.0):
            return dtype
        return self.precision

    def throughput(self, dims: Mapping[str, Any], median_ms: float) -> dict[str, float]:
        seconds = median_ms / 1e3
        found: dict[str, float] = {}
        if self.flops is not None and seconds > 0:
            found["gflops"] = float(call_with_declared_dims(self.flops, dims)) / seconds / 1e9
        if self.bytes_moved is not None and seconds > 0:
            found["gbps"] = float(call_with_declared_dims(self.bytes_moved, dims)) / seconds / 1e9
        return found

    def starting_domains(self, dims: Mapping[str, Any], input_set: str | None = None) -> dict[str, Domain]:
        """Every buffer that starts with values rather than poison: declared inputs (domains evaluated at `dims`;
        `input_set`: with that declared set's domains laid over them) and outputs with a declared `initial` state
        (a fill)."""
        specs = {**self.input_specs, **(self.input_sets[input_set] if input_set is not None else {})}
        found = {name: spec.at(dims) for name, spec in specs.items()}
        found.update({name: Domain.fill(value) for name, value in self.initial.items()})
        return found

    def tolerances_at(self, dims: Mapping[str, Any]) -> tuple[float | None, float | None]:
        """The declared (atol, rtol) at `dims` (None where ref.py declares none: the dtype's default applies)."""
        return (tolerance_at(self.atol_spec, "atol", dims, self.path),
                tolerance_at(self.rtol_spec, "rtol", dims, self.path))

    def reduction_length(self, dims: Mapping[str, Any]) -> int | None:
        if self.reduction is None:
            return None
        length = evaluate(self.reduction, dims)
        if isinstance(length, bool) or not isinstance(length, int) or length < 0:
            raise CaseError(f"{self.path}: `reduction = {self.reduction}` is {length!r} at dims {dict(dims)}; it must "
                            "be the reduction's length, a non-negative integer.")
        return length

    def scaled_rtol(self, rtol: float, dims: Mapping[str, Any]) -> float:
        """`rtol_scale = "sqrt_reduction"`: rtol * sqrt(length / 1024) for reductions longer than 1024, else rtol."""
        length = self.reduction_length(dims)
        if self.rtol_scale != "sqrt_reduction" or length is None or length <= SQRT_REDUCTION_BASE:
            return rtol
        return rtol * math.sqrt(length / SQRT_REDUCTION_BASE)

    def uses_magnitude_bound(self, dtype: str) -> bool:
        """The default reduction rule (`reduction` declared, no `rtol_scale`) for a float output."""
        return self.reduction is not None and self.rtol_scale is None and is_float(dtype)


def reduction_bound(length: int, arithmetic: str, magnitude: Any, reference: Any) -> Any:
    """Per-element allowance of a float reduction of `length` terms computed in `arithmetic` (a ROUNDING_UNIT key):
    8 * u * (magnitude + sqrt(length) * |reference|), magnitude = the reference evaluated on |inputs| (sum |a_k b_k|
    for a matmul), reference = its value (sum a_k b_k).

    Why this shape: summing terms t_k in any fixed order rounds each partial sum s_k once, an error of about
    u * sqrt(sum_k s_k^2) in all. The harness draws every input element independently, so in any order that does not
    depend on the values (naive, blocked, pairwise, split-K, per-thread partials) the partial sums are a random walk
    that drifts toward the total: sum_k s_k^2 ~ length * reference^2 / 3 + length * sum_k t_k^2 / 2, and
    sqrt(length * sum_k t_k^2) is about 1.6 * magnitude for products of normal or uniform values. So the rounding of
    the sum is bounded by u * (magnitude + sqrt(length) * |reference|) times a small constant (8 leaves room), which
    is sqrt(length) times tighter than u * sqrt(length) * magnitude where the terms cancel: inputs rounded to a coarser
    mantissa (tf32's 10 bits) err by about u_tf32 * sqrt(sum_k t_k^2), far outside it at any length, and within it
    once the case accepts that arithmetic (ref.py `precision`)."""
    return REDUCTION_BOUND_FACTOR * ROUNDING_UNIT[arithmetic] * (
        magnitude + math.sqrt(max(length, 1)) * abs(reference))


def tolerance_at(spec: float | DimExpr | None, name: str, dims: Mapping[str, Any], path: Path) -> float | None:
    if spec is None or not isinstance(spec, DimExpr):
        return spec
    value = spec.evaluate(dims)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise CaseError(f"{path}: `{name}` = {spec} gives {value!r} at dims {dict(dims)}; a tolerance must be a "
                        "finite, non-negative number for every dims the harness draws.")
    return float(value)


def call_with_declared_dims(function: Callable[..., float], dims: Mapping[str, Any]) -> float:
    """Call `flops(N)` / `bytes_moved(N)` with the dims it declares (all of them if it takes **kwargs).

    dims.json may hold more than a function needs (e.g. a float `alpha`); passing everything would raise
    TypeError after the timing was already spent.
    """
    parameters = inspect.signature(function).parameters.values()
    given = dict(dims) if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters) else \
        {p.name: dims[p.name] for p in parameters if p.name in dims}
    try:
        return function(**given)
    except Exception as exc:
        name = getattr(function, "__name__", "function")
        raise CaseError(f"ref.py: `{name}` raised {type(exc).__name__}: {exc} at dims {dict(dims)}. It must return a "
                        f"number for every dims, e.g. `def {name}(N): return 4 * N`.") from exc


def check_relations(reference: Reference, dims: Mapping[str, Any], what: str) -> None:
    """Refuse dims that break a declared relation (the defaults are checked at load)."""
    broken = [str(r) for r in reference.relations if not r.evaluate(dims)]
    if broken:
        raise CaseError(f"{what} {dict(dims)} break the declared relations {broken}. Fix dims.json (or the "
                        "relation) so that they hold.")
