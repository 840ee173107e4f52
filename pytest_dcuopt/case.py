"""Kernel cases: a directory with ref.py, dims.json and kernel files (or a seed `run_*` directory)."""
from __future__ import annotations

import hashlib
import importlib.util
import json
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Mapping

from .buffers import Domain
from .errors import CaseError

KERNEL_STEM = "kernel"


@dataclass(frozen=True)
class Branch:
    """One kernel variant: the baseline or a branch, from one source file."""

    name: str
    source: Path

    @property
    def is_baseline(self) -> bool:
        return self.name == "baseline"


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


@dataclass
class KernelCase:
    name: str
    root: Path
    ref_path: Path
    dims: dict[str, Any]
    branches: list[Branch] = field(default_factory=list)
    layout: str = "case"  # "case" or "seed-run"
    toolchain_dims: dict[str, dict[str, Any]] = field(default_factory=dict)  # from dims.<toolchain>.json

    def sources_for(self, extensions: tuple[str, ...]) -> list[Branch]:
        return [b for b in self.branches if b.source.suffix in extensions]

    def for_toolchain(self, toolchain: str) -> KernelCase:
        """This case with `dims.<toolchain>.json` laid over dims.json (e.g. larger sizes for a GPU)."""
        override = self.toolchain_dims.get(toolchain)
        return replace(self, dims={**self.dims, **override}) if override else self


def is_case_dir(directory: Path) -> bool:
    return (directory / "ref.py").is_file() and bool(_kernel_files(directory))


def is_seed_run_dir(directory: Path) -> bool:
    return directory.name.startswith("run_") and (directory / "state.json").is_file() and (directory / "baseline").is_dir()


def _kernel_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.glob(f"{KERNEL_STEM}.*") if p.is_file() and p.suffix not in (".so", ".o", ".json"))


def load_case(directory: Path) -> KernelCase:
    """Read a case directory (or a seed run directory) without importing any kernel."""
    if is_seed_run_dir(directory):
        return _load_seed_run(directory)
    dims = load_dims(directory / "dims.json")
    case = KernelCase(directory.name, directory, directory / "ref.py", dims,
                      toolchain_dims=load_toolchain_dims(directory, dims))
    case.branches = [Branch("baseline", path) for path in _kernel_files(directory)]
    branch_root = directory / "branches"
    if branch_root.is_dir():
        for sub in sorted(p for p in branch_root.iterdir() if p.is_dir()):
            case.branches += [Branch(sub.name, path) for path in _kernel_files(sub)]
    return case


def _load_seed_run(directory: Path) -> KernelCase:
    """The original skill's run layout: state.json, baseline/<file>, iterv<i>/branches/b<k>/kernel.<ext>."""
    try:
        state = json.loads((directory / "state.json").read_text())
    except json.JSONDecodeError as exc:
        raise CaseError(f"{directory}/state.json is not valid JSON ({exc}); it cannot be read as a seed run.") from exc
    ref = Path(state.get("ref_file", ""))
    if not ref.is_file():
        ref = directory.parent / "ref.py"
    if not ref.is_file():
        raise CaseError(f"{directory}: state.json names ref_file {state.get('ref_file')!r}, which does not exist, and "
                        f"there is no ref.py beside the run directory. Copy the reference to {directory.parent}/ref.py.")
    dims = state.get("dims") or {}
    _check_dims(dims, directory / "state.json")
    case = KernelCase(directory.name, directory, ref, dict(dims), layout="seed-run")
    case.branches = [Branch("baseline", p) for p in sorted((directory / "baseline").glob("*"))
                     if p.suffix in (".hip", ".cu", ".cpp", ".cc", ".cxx", ".py")]
    for iteration in sorted(directory.glob("iterv*"), key=lambda p: int(p.name[5:]) if p.name[5:].isdigit() else 0):
        for sub in sorted((iteration / "branches").glob("b*")):
            case.branches += [Branch(f"{iteration.name}-{sub.name}", p) for p in _kernel_files(sub)]
    return case


def load_dims(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise CaseError(f"{path} is missing. Every case needs its default dims, e.g. {{\"N\": 1048576}}.")
    try:
        dims = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise CaseError(f"{path} is not valid JSON: {exc}. Write an object such as {{\"N\": 1048576}}.") from exc
    _check_dims(dims, path)
    return dims


def load_toolchain_dims(directory: Path, dims: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """`dims.<toolchain>.json` files: per-toolchain default dims (only dims that dims.json declares)."""
    found: dict[str, dict[str, Any]] = {}
    for path in sorted(directory.glob("dims.*.json")):
        toolchain = path.name[len("dims."):-len(".json")]
        override = load_dims(path)
        unknown = sorted(set(override) - set(dims))
        if unknown:
            raise CaseError(f"{path} sets {unknown}, which dims.json does not declare ({sorted(dims)}). A toolchain's "
                            "dims file may only change the defaults of existing dims.")
        found[toolchain] = override
    return found


def _check_dims(dims: Any, path: Path) -> None:
    if not isinstance(dims, dict) or not dims:
        raise CaseError(f"{path} must hold a non-empty JSON object of dims, e.g. {{\"N\": 1048576}}; got {dims!r}.")
    for key, value in dims.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (isinstance(value, float) and not math.isfinite(value)):
            raise CaseError(f"{path}: dim {key!r} = {value!r} is not a number; dims are integers (or floats for "
                            "scalar parameters).")


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
