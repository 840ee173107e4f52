"""Kernel cases: a directory with ref.py, dims.json and kernel files (or a seed `run_*` directory)."""
from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import CaseError

KERNEL_STEM = "kernel"


@dataclass(frozen=True)
class Branch:
    """One kernel variant: the baseline or a branch, from one source file."""

    name: str
    source: Path

    @property
    def suffix(self) -> str:
        """The suffix toolchains claim files by (`Toolchain.extensions`): see `kernel_suffix`."""
        return kernel_suffix(self.source)

    @property
    def is_baseline(self) -> bool:
        return self.name == "baseline"


@dataclass
class KernelCase:
    name: str
    root: Path
    ref_path: Path
    dims: dict[str, Any]
    branches: list[Branch] = field(default_factory=list)
    toolchain_dims: dict[str, dict[str, Any]] = field(default_factory=dict)  # from dims.<toolchain>.json

    def sources_for(self, extensions: tuple[str, ...]) -> list[Branch]:
        return [b for b in self.branches if b.suffix in extensions]

    def for_toolchain(self, toolchain: str) -> KernelCase:
        """This case with `dims.<toolchain>.json` laid over dims.json (e.g. larger sizes for a GPU)."""
        override = self.toolchain_dims.get(toolchain)
        return replace(self, dims={**self.dims, **override}) if override else self


def kernel_suffix(path: Path) -> str:
    """Everything after the stem of a `kernel.<...>` file (`.cu`, `.triton.py`), so `kernel.triton.py` is never a
    `.py` kernel; the last suffix for other names (seed run files such as `vector_add.cu`)."""
    if path.name.startswith(f"{KERNEL_STEM}."):
        return path.name[len(KERNEL_STEM):]
    return path.suffix


def is_case_dir(directory: Path) -> bool:
    return (directory / "ref.py").is_file() and bool(_kernel_files(directory))


def is_seed_run_dir(directory: Path) -> bool:
    return (directory.name.startswith("run_") and (directory / "state.json").is_file()
            and (directory / "baseline").is_dir())


def _kernel_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.glob(f"{KERNEL_STEM}.*")
                  if p.is_file() and p.suffix not in (".so", ".o", ".json"))


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
                        "there is no ref.py beside the run directory. "
                        f"Copy the reference to {directory.parent}/ref.py.")
    dims = state.get("dims") or {}
    _check_dims(dims, directory / "state.json")
    case = KernelCase(directory.name, directory, ref, dict(dims))
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
        not_finite = isinstance(value, float) and not math.isfinite(value)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not_finite:
            raise CaseError(f"{path}: dim {key!r} = {value!r} is not a number; dims are integers (or floats for "
                            "scalar parameters).")
