"""ref.py: the reference function and everything a case declares beside it (shapes, inputs, tolerances...)."""
from __future__ import annotations

import hashlib
import importlib.util
import inspect
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from ..errors import CaseError
from .buffers import Domain


@dataclass
class Reference:
    """The loaded ref.py and its declared contract."""

    path: Path
    module: ModuleType
    function: Callable[..., Any]
    atol: float | None
    rtol: float | None
    shapes: dict[str, tuple[Any, ...]] | None
    dim_ranges: dict[str, tuple[int, ...]]
    inputs: dict[str, Domain]
    flops: Callable[..., float] | None
    bytes_moved: Callable[..., float] | None

    def throughput(self, dims: Mapping[str, Any], median_ms: float) -> dict[str, float]:
        seconds = median_ms / 1e3
        found: dict[str, float] = {}
        if self.flops is not None and seconds > 0:
            found["gflops"] = float(call_with_declared_dims(self.flops, dims)) / seconds / 1e9
        if self.bytes_moved is not None and seconds > 0:
            found["gbps"] = float(call_with_declared_dims(self.bytes_moved, dims)) / seconds / 1e9
        return found


def call_with_declared_dims(function: Callable[..., float], dims: Mapping[str, Any]) -> float:
    """Call `flops(N)` / `bytes_moved(N)` with the dims it declares (all of them if it takes **kwargs).

    dims.json may hold more than a function needs (e.g. a float `alpha`); passing everything would raise
    TypeError after the timing was already spent.
    """
    parameters = inspect.signature(function).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return function(**dims)
    return function(**{p.name: dims[p.name] for p in parameters if p.name in dims})


_REF_MODULES: dict[tuple[Path, int], ModuleType] = {}


def import_ref_module(path: Path) -> ModuleType:
    """Import a case's ref.py once per process and content (collection and the session share it)."""
    key = (path.resolve(), path.stat().st_mtime_ns)
    if key in _REF_MODULES:
        return _REF_MODULES[key]
    name = "dcuopt_ref_" + hashlib.sha256(str(key[0]).encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise CaseError(f"{path} cannot be imported as a Python module.")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise CaseError(f"importing {path} raised {type(exc).__name__}: {exc}. Fix the reference module.") from exc
    _REF_MODULES[key] = module
    return module


def load_reference(path: Path, dims: Mapping[str, Any]) -> Reference:
    """Import ref.py and validate everything it declares."""
    module = import_ref_module(path)
    function = getattr(module, "reference", None)
    if not callable(function):
        raise CaseError(f"{path} defines no callable `reference(**kwargs)`. It receives the kernel's parameters by "
                        "name and writes the outputs in place, e.g. `def reference(x, y, N): y.copy_(x * 2)`.")
    return Reference(
        path=path, module=module, function=function,
        atol=_optional_float(module, "atol", path), rtol=_optional_float(module, "rtol", path),
        shapes=_shapes(module, path), dim_ranges=_dim_ranges(module, dims, path), inputs=_inputs(module, path),
        flops=_dims_function(module, "flops", dims, path),
        bytes_moved=_dims_function(module, "bytes_moved", dims, path),
    )


def _optional_float(module: ModuleType, name: str, path: Path) -> float | None:
    """A tolerance: a finite number >= 0. NaN fails every comparison, inf passes every one: both are refused."""
    value = getattr(module, name, None)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CaseError(f"{path}: `{name} = {value!r}` is a {type(value).__name__}; a tolerance must be a finite, "
                        f"non-negative number, e.g. `{name} = 1e-5`.")
    if not math.isfinite(value):
        effect = "lets every value pass" if value > 0 else "fails every comparison"  # nan > 0 is False
        raise CaseError(f"{path}: `{name} = {value!r}` is not a finite number, so it {effect}. Give a finite, "
                        f"non-negative tolerance, e.g. `{name} = 1e-5`, or remove it for the dtype's default.")
    if value < 0:
        raise CaseError(f"{path}: `{name} = {value!r}` is negative; a tolerance must be a finite, non-negative "
                        f"number, e.g. `{name} = 1e-5`.")
    return float(value)


def _dims_function(module: ModuleType, name: str, dims: Mapping[str, Any], path: Path) -> Callable[..., float] | None:
    """`flops` / `bytes_moved`: a function whose named parameters are all dims (checked now, not after timing)."""
    value = getattr(module, name, None)
    if value is None:
        return None
    if not callable(value):
        raise CaseError(f"{path}: `{name}` must be a function of the dims, e.g. `def {name}(N): return 3 * 4 * N`.")
    try:
        parameters = inspect.signature(value).parameters.values()
    except (TypeError, ValueError) as exc:
        raise CaseError(f"{path}: cannot read the parameters of `{name}` ({exc}); define it with `def`, e.g. "
                        f"`def {name}(N): return 3 * 4 * N`.") from exc
    named = [p.name for p in parameters if p.kind not in (inspect.Parameter.VAR_POSITIONAL,
                                                          inspect.Parameter.VAR_KEYWORD)]
    unknown = [n for n in named if n not in dims]
    if unknown:
        raise CaseError(f"{path}: `{name}({', '.join(named)})` takes {', '.join(repr(n) for n in unknown)}, which "
                        f"{'is' if len(unknown) == 1 else 'are'} not in dims.json (dims: {sorted(dims)}). It is called "
                        "with the dims it names: rename the parameter to a dim or add the dim to dims.json.")
    return value


def _shapes(module: ModuleType, path: Path) -> dict[str, tuple[Any, ...]] | None:
    shapes = getattr(module, "shapes", None)
    if shapes is None:
        return None
    if not isinstance(shapes, dict) or not all(isinstance(v, (tuple, list)) for v in shapes.values()):
        raise CaseError(f"{path}: `shapes` must map pointer parameters to tuples of dim names/ints, e.g. "
                        f"{{'x': ('N',)}}; got {shapes!r}.")
    return {k: tuple(v) for k, v in shapes.items()}


def _dim_ranges(module: ModuleType, dims: Mapping[str, Any], path: Path) -> dict[str, tuple[int, ...]]:
    declared = getattr(module, "dim_ranges", None) or {}
    if not isinstance(declared, dict):
        raise CaseError(f"{path}: `dim_ranges` must be a dict dim -> (lo, hi) or (lo, hi, multiple_of).")
    ranges: dict[str, tuple[int, ...]] = {}
    for dim, default in dims.items():
        if not isinstance(default, int):
            continue  # float scalars keep their dims.json value
        spec = tuple(declared.get(dim, (1, max(1, int(default)))))
        if len(spec) not in (2, 3) or not all(isinstance(v, int) for v in spec) or spec[0] < 0 or spec[0] > spec[1]:
            raise CaseError(f"{path}: dim_ranges[{dim!r}] = {spec!r}; expected (lo, hi) or (lo, hi, multiple_of) "
                            "with integers 0 <= lo <= hi.")
        ranges[dim] = spec
    unknown = set(declared) - set(dims)
    if unknown:
        raise CaseError(f"{path}: dim_ranges names {sorted(unknown)}, which are not in dims.json ({sorted(dims)}).")
    return ranges


def _inputs(module: ModuleType, path: Path) -> dict[str, Domain]:
    declared = getattr(module, "inputs", None) or {}
    if not isinstance(declared, dict):
        raise CaseError(f"{path}: `inputs` must be a dict parameter -> value domain.")
    return {name: Domain.parse(name, spec) for name, spec in declared.items()}
