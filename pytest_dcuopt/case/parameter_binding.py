"""Matching the parameters of `solve` with those of `reference`: by name, or by position.

A C ABI is positional: the names in `solve(...)` are the kernel author's, not part of the contract.
When they are the reference's names (in any order) the kernel is bound by name, as always. When they
differ (`n` for `N`, `rows`/`cols` for `M`/`N`) but `solve` has the reference's count of parameters
and each one's kind fits the reference's parameter at the same position (a buffer where the reference
has a buffer, a scalar where it has a dim), each kernel parameter takes the reference's name: dims,
shapes, inputs and the reference call then all use the reference's names. Anything else is refused,
listing both signatures.
"""
from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import SignatureError
from .cabi import Param


@dataclass(frozen=True)
class ParameterBinding:
    """`params` carry the reference's names; `mapping` is kernel name -> reference name (by position only)."""

    params: tuple[Param, ...]
    by: str = "name"
    mapping: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"by": self.by, "map": dict(self.mapping)}

    def describe(self, source: str) -> str:
        renamed = ", ".join(f"{k} -> {v}" for k, v in self.mapping.items() if k != v)
        return (f"{source}: solve's parameter names differ from reference's, so they are bound by position (a C ABI "
                f"is positional): {renamed}. dims, shapes and inputs use the reference's names.")


@dataclass(frozen=True)
class _RefParam:
    name: str
    kind: str  # "buffer", "output buffer", "int dim", "float dim"
    optional: bool


def bind_parameters(params: Sequence[Param], reference: Callable[..., Any], dims: Mapping[str, Any],
                    outputs_with_initial: Sequence[str], source: str) -> ParameterBinding:
    """Bind `solve`'s parameters to the reference's: by name when the names are the reference's, else by position
    when count and kinds agree; SignatureError otherwise."""
    kernel_names = [p.name for p in params]
    ref_params = _reference_params(reference, dims, outputs_with_initial)
    if ref_params is None:  # reference(**kwargs): no positions to bind to
        return ParameterBinding(tuple(params))
    names = {r.name for r in ref_params}
    required = {r.name for r in ref_params if not r.optional}
    if set(kernel_names) <= names and required <= set(kernel_names):
        return ParameterBinding(tuple(params))
    problems = _positional_problems(params, ref_params)
    if problems:
        raise SignatureError(
            f"{source}: solve's parameter names are not the reference's, and binding them by position does not fit:\n"
            f"  kernel:    {_kernel_signature(params)}\n  reference: {_reference_signature(ref_params)}\n"
            + "\n".join(f"  - {p}" for p in problems)
            + "\nA C ABI is positional, so different names are fine when the count and the kinds match; rename the "
              "parameters to the reference's or reorder them to match.")
    mapping = {p.name: r.name for p, r in zip(params, ref_params[:len(params)], strict=True)}
    return ParameterBinding(tuple(replace(p, name=mapping[p.name]) for p in params), "position", mapping)


def _reference_params(reference: Callable[..., Any], dims: Mapping[str, Any],
                      outputs_with_initial: Sequence[str]) -> list[_RefParam] | None:
    try:
        parameters = list(inspect.signature(reference).parameters.values())
    except (TypeError, ValueError):
        return None
    if any(p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL) for p in parameters):
        return None
    return [_RefParam(p.name, _reference_kind(p.name, dims, outputs_with_initial), p.default is not p.empty)
            for p in parameters]


def _reference_kind(name: str, dims: Mapping[str, Any], outputs_with_initial: Sequence[str]) -> str:
    if name in dims:
        value = dims[name]
        return "int dim" if isinstance(value, int) or (isinstance(value, float) and value.is_integer()) else \
            "float dim"
    return "output buffer" if name in outputs_with_initial else "buffer"


def _positional_problems(params: Sequence[Param], ref_params: Sequence[_RefParam]) -> list[str]:
    problems = []
    required = [r for r in ref_params if not r.optional]
    if not len(required) <= len(params) <= len(ref_params):
        problems.append(f"solve has {len(params)} parameters, reference {len(ref_params)}"
                        + (f" ({len(required)} without a default)" if len(required) != len(ref_params) else ""))
        return problems
    positions = {r.name: index for index, r in enumerate(ref_params)}
    for index, (param, ref) in enumerate(zip(params, ref_params[:len(params)], strict=True)):
        where = f"parameter {index + 1}: kernel `{param.declaration}` vs reference `{ref.name}` ({ref.kind})"
        if param.name in positions and positions[param.name] != index:
            problems.append(f"{where}: the name {param.name!r} is reference parameter {positions[param.name] + 1}, "
                            "so names and positions disagree")
        elif param.pointer and ref.kind.endswith("dim"):
            problems.append(f"{where}: a buffer where the reference has a dim from dims.json")
        elif not param.pointer and not ref.kind.endswith("dim"):
            problems.append(f"{where}: a scalar where the reference has a buffer (not in dims.json)")
        elif param.pointer and param.const and ref.kind == "output buffer":
            problems.append(f"{where}: const, but ref.py `initial` declares {ref.name!r} an output")
        elif not param.pointer and param.is_integer and ref.kind == "float dim":
            problems.append(f"{where}: an integer, but dims.json gives {ref.name!r} a fractional value")
    return problems


def _kernel_signature(params: Sequence[Param]) -> str:
    return f"solve({', '.join(p.declaration for p in params)})"


def _reference_signature(ref_params: Sequence[_RefParam]) -> str:
    return f"reference({', '.join(f'{r.name}: {r.kind}' for r in ref_params)})"


def bind_launcher(names: Sequence[str], reference: Callable[..., Any], dims: Mapping[str, Any],
                  outputs_with_initial: Sequence[str], source: str) -> ParameterBinding:
    """Bind a launcher that has no C types (a Triton `solve(a, b, c, n)`) to the reference like a C ABI `solve`:
    by name, else by position. Each launcher parameter takes the kind of the reference parameter at its position
    (it declares none), so what can disagree is the count and a name that the reference has at another position."""
    ref_params = _reference_params(reference, dims, outputs_with_initial) or []
    params = []
    for index, name in enumerate(names):
        kind = ref_params[index].kind if index < len(ref_params) else "buffer"
        scalar = kind.endswith("dim")
        dtype = "float64" if kind == "float dim" else "int64" if scalar else "float32"
        params.append(Param(name, dtype, not scalar, False, name))
    return bind_parameters(params, reference, dims, outputs_with_initial, source)
