"""ref.py: the reference function and everything a case declares beside it (shapes, inputs, tolerances...)."""
from __future__ import annotations

import hashlib
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Mapping

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
            found["gflops"] = float(self.flops(**dims)) / seconds / 1e9
        if self.bytes_moved is not None and seconds > 0:
            found["gbps"] = float(self.bytes_moved(**dims)) / seconds / 1e9
        return found



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
        flops=_optional_callable(module, "flops", path), bytes_moved=_optional_callable(module, "bytes_moved", path),
    )


def _optional_float(module: ModuleType, name: str, path: Path) -> float | None:
    value = getattr(module, name, None)
    if value is None:
        return None
    if not isinstance(value, (int, float)) or value < 0:
        raise CaseError(f"{path}: `{name} = {value!r}` must be a non-negative number.")
    return float(value)


def _optional_callable(module: ModuleType, name: str, path: Path) -> Callable[..., float] | None:
    value = getattr(module, name, None)
    if value is not None and not callable(value):
        raise CaseError(f"{path}: `{name}` must be a function of the dims, e.g. `def {name}(N): return 3 * 4 * N`.")
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
