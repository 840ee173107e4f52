"""Benchmark sizes: the dims a case's branches are timed at, declared in ref.py (nvbench's named points and axes).

    bench_sizes = {"l2": {"N": 1 << 16}, "dram": {"N": 1 << 23}}    # named points: name -> the dims it sets
    bench_sizes = {"N": [1 << 16, 1 << 20, 1 << 23]}                 # axes: dim -> values, named "N=65536", ...
    bench_sizes_by_toolchain = {"cuda": {...}, "triton": None}      # replaces bench_sizes for one toolchain

A size sets some of the dims dims.json declares; the others keep the toolchain's default dims (dims.json with
dims.<toolchain>.json laid over it). Each size becomes a benchmark test of its own per branch, with its own
timing, speedup and champion; correctness is checked as without sizes (the default dims, boundary dims, Hypothesis).
Without `bench_sizes` a case is timed at its default dims only.
"""
from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import CaseError
from .ref_loader import import_ref_module

DECLARATION = "bench_sizes"
BY_TOOLCHAIN = "bench_sizes_by_toolchain"
ALL = "all"  # --dcuopt-sizes all: every declared size (never a size's name)
# Far more than anyone times on purpose; an axis product past it is a typo (a range where a list was meant).
MAX_SIZES = 64
# Names appear in test ids, in `-k` expressions and in --dcuopt-sizes (comma separated): no commas or spaces.
NAME_PATTERN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+=-]*")
# The dims dims.json or a size may give: what some C integer type the harness passes holds (int64_t down, uint64_t
# up: a mask or seed may be 2**64 - 1); whether a parameter's own type holds it is checked when buffers are sized
# (`buffers.check_scalar_values`), and what fits is checked against memory.
MIN_DIM, MAX_DIM = -(2**63), 2**64 - 1  # int64_t's least, uint64_t's greatest
EXAMPLE = 'bench_sizes = {"small": {"N": 65536}, "large": {"N": 16777216}} or bench_sizes = {"N": [65536, 16777216]}'


@dataclass(frozen=True)
class BenchSize:
    """One declared benchmark size: its name (a test id part) and the dims it sets."""

    name: str
    dims: Mapping[str, Any]

    def describe(self) -> str:
        """`N=65536, K=64`: the dims it sets, for tables and messages."""
        return ", ".join(f"{key}={value}" for key, value in self.dims.items())


@dataclass(frozen=True)
class CaseSizes:
    """A case's declared sizes: for every toolchain, and per toolchain where ref.py replaces them."""

    default: tuple[BenchSize, ...] = ()
    by_toolchain: Mapping[str, tuple[BenchSize, ...]] = field(default_factory=dict)


def read_bench_sizes(ref_path: Path, dims: Mapping[str, Any]) -> CaseSizes:
    """The sizes ref.py declares (none when it does not mention `bench_sizes`: then it is not imported here).

    Raises CaseError naming the file, the value and the fix for a declaration that cannot be used.
    """
    text = ref_path.read_text(errors="replace")
    if DECLARATION not in text:
        return CaseSizes()
    module = import_ref_module(ref_path)
    declared = getattr(module, DECLARATION, None)
    default = () if declared is None else parse_bench_sizes(declared, dims, f"{ref_path}: {DECLARATION}")
    overrides = getattr(module, BY_TOOLCHAIN, None)
    if overrides is None:
        return CaseSizes(default)
    if not isinstance(overrides, dict) or not all(isinstance(name, str) for name in overrides):
        raise CaseError(f"{ref_path}: {BY_TOOLCHAIN} = {_short(overrides)} must be a dict toolchain name -> sizes "
                        f"(or None for no sizes on that toolchain), e.g. {BY_TOOLCHAIN} = "
                        '{"cuda": {"N": [1048576, 33554432]}, "triton": None}.')
    by_toolchain = {toolchain: () if value is None else
                    parse_bench_sizes(value, dims, f"{ref_path}: {BY_TOOLCHAIN}[{toolchain!r}]")
                    for toolchain, value in overrides.items()}
    return CaseSizes(default, by_toolchain)


def parse_bench_sizes(declared: Any, dims: Mapping[str, Any], where: str) -> tuple[BenchSize, ...]:
    """Named points (`{name: {dim: value}}`) or axes (`{dim: [values]}`, every combination, named `N=65536`),
    checked against the case's default dims (`dims`: dims.json)."""
    if not isinstance(declared, dict) or not declared:
        what = "is empty" if isinstance(declared, dict) else f"is a {type(declared).__name__}"
        raise CaseError(f"{where} = {_short(declared)} {what}; declare named sizes {{name: {{dim: value}}}} or axes "
                        f"{{dim: [values]}}, e.g. {EXAMPLE}. Remove it to time at the default dims only.")
    points = [key for key, value in declared.items() if isinstance(value, dict)]
    axes = [key for key, value in declared.items() if isinstance(value, (list, tuple))]
    if points and not axes and len(points) == len(declared):
        sizes = tuple(_point(name, value, dims, where) for name, value in declared.items())
    elif axes and not points and len(axes) == len(declared):
        sizes = _axes(declared, dims, where)
    else:
        others = {key: type(value).__name__ for key, value in declared.items() if key not in points + axes}
        raise CaseError(f"{where} mixes forms ({_forms(points, axes, others)}). Use one: named sizes, each a dict of "
                        f"the dims it sets, or axes, each a list of values of one dim; e.g. {EXAMPLE}.")
    if len(sizes) > MAX_SIZES:
        raise CaseError(f"{where} declares {len(sizes)} sizes (the product of its axes), more than {MAX_SIZES}: each "
                        "is a benchmark test per branch. Give fewer values per axis, or named sizes.")
    return sizes


def _forms(points: Sequence[str], axes: Sequence[str], others: Mapping[str, str]) -> str:
    parts = [f"named sizes {list(points)}" if points else "", f"axes {list(axes)}" if axes else "",
             ", ".join(f"{key!r} is a {kind}" for key, kind in others.items())]
    return "; ".join(part for part in parts if part)


def _point(name: Any, value: dict[str, Any], dims: Mapping[str, Any], where: str) -> BenchSize:
    _check_name(name, where)
    if not value:
        raise CaseError(f"{where}[{name!r}] = {{}} sets no dim; give the dims this size changes, e.g. "
                        f"{{{json.dumps(next(iter(dims)))}: 1048576}}.")
    for dim, dim_value in value.items():
        _check_value(dim, dim_value, dims, f"{where}[{name!r}]")
    return BenchSize(name, dict(value))


def _axes(declared: Mapping[str, Any], dims: Mapping[str, Any], where: str) -> tuple[BenchSize, ...]:
    for dim, values in declared.items():
        if not values:
            raise CaseError(f"{where}[{dim!r}] = {_short(values)} is an empty axis; give the values to time, e.g. "
                            f"{{{json.dumps(dim)}: [65536, 1048576]}}.")
        for value in values:
            _check_value(dim, value, dims, f"{where}[{dim!r}]")
        repeated = sorted({repr(v) for v in values if list(values).count(v) > 1})
        if repeated:
            raise CaseError(f"{where}[{dim!r}] = {_short(values)} repeats {', '.join(repeated)}; each value is one "
                            "benchmark size: list it once.")
    combos = itertools.product(*(list(values) for values in declared.values()))
    sizes = []
    for combo in combos:
        chosen = dict(zip(declared, combo, strict=True))
        sizes.append(BenchSize("-".join(f"{dim}={value}" for dim, value in chosen.items()), chosen))
    return tuple(sizes)


def _check_name(name: Any, where: str) -> None:
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name) or name == ALL:
        why = (f"{ALL!r} is reserved (--dcuopt-sizes {ALL} picks every size)" if name == ALL else
               "names appear in test ids and in --dcuopt-sizes, so they are letters, digits and _ . + = - "
               "(not starting with - or .)")
        raise CaseError(f"{where}: size name {_short(name)} cannot be used: {why}. Rename it, e.g. \"l2\" or "
                        "\"large\".")


def _check_value(dim: Any, value: Any, dims: Mapping[str, Any], where: str) -> None:
    """A dim dims.json declares, given a finite number of the same kind (an integer for an integer dim)."""
    if dim not in dims:
        raise CaseError(f"{where} sets {dim!r}, which dims.json does not declare ({sorted(dims)}). A benchmark size "
                        "changes the value of existing dims: fix the name, or add the dim to dims.json.")
    not_finite = isinstance(value, float) and not math.isfinite(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not_finite:
        kind = "not a finite number" if not_finite else f"not a number (it is a {type(value).__name__})"
        raise CaseError(f"{where}: {dim!r} = {_short(value)} is {kind}; give the size to time, e.g. "
                        f"{{{json.dumps(dim)}: 1048576}}.")
    if isinstance(dims[dim], int) and not isinstance(value, int):
        raise CaseError(f"{where}: {dim!r} = {value!r} is not an integer, but dims.json gives {dim!r} as one "
                        f"({dims[dim]}); give a whole number, e.g. {int(value) if math.isfinite(value) else 1024}.")
    if isinstance(value, int) and not MIN_DIM <= value <= MAX_DIM:
        raise CaseError(f"{where}: {dim!r} = {value} does not fit a 64-bit integer; no buffer or C scalar can hold "
                        "it. Give the size you mean to time, e.g. 1048576.")


def select_sizes(declared: Sequence[BenchSize], picked: Sequence[str]) -> list[BenchSize]:
    """The declared sizes --dcuopt-sizes picks (`all`: every one), in declaration order."""
    if ALL in picked:
        return list(declared)
    return [size for size in declared if size.name in picked]


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."
