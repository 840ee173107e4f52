"""Kernel cases: a directory with ref.py, dims.json and kernel files (or a seed `run_*` directory)."""
from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import CaseError
from .sizes import MAX_DIM, MIN_DIM, BenchSize, CaseSizes, read_bench_sizes

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
    # Branch name -> what is wrong with its files (no kernel file, a kernel "file" that is a folder or a dangling
    # link): such a branch gets a failing test of its own instead of silently not being collected.
    layout_problems: dict[str, str] = field(default_factory=dict)
    # Kernel files that are symlinks to a file outside the case (said at collection, not refused).
    outside_links: dict[Path, Path] = field(default_factory=dict)
    # ref.py `bench_sizes` (and `bench_sizes_by_toolchain`): the sizes every branch is timed at; none: dims only.
    sizes: CaseSizes = field(default_factory=CaseSizes)

    def sources_for(self, extensions: tuple[str, ...]) -> list[Branch]:
        return [b for b in self.branches if b.suffix in extensions]

    def for_toolchain(self, toolchain: str) -> KernelCase:
        """This case with `dims.<toolchain>.json` laid over dims.json (e.g. larger sizes for a GPU), and the
        toolchain's own benchmark sizes where ref.py declares them (`bench_sizes_by_toolchain`)."""
        override = self.toolchain_dims.get(toolchain)
        sizes = self.sizes.by_toolchain.get(toolchain)
        if not override and sizes is None:
            return self
        return replace(self, dims={**self.dims, **(override or {})},
                       sizes=self.sizes if sizes is None else CaseSizes(sizes))

    @property
    def bench_sizes(self) -> tuple[BenchSize, ...]:
        """The benchmark sizes for every toolchain (after `for_toolchain`: for that toolchain)."""
        return self.sizes.default

    def dims_at(self, size: BenchSize | None) -> dict[str, Any]:
        """The dims a benchmark times: the default dims, with the size's dims laid over them."""
        return {**self.dims, **(size.dims if size is not None else {})}


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


def is_loop_run_dir(directory: Path) -> bool:
    """A run directory of the `dcuopt` loop (`dcuopt setup`): a seed-style run whose state.json also carries the
    loop's `layout_version`. It sits inside its case folder, holding copies of the case (`iterv<i>/`)."""
    if not is_seed_run_dir(directory):
        return False
    try:
        state = json.loads((directory / "state.json").read_text())
    except (OSError, ValueError):
        return False
    return isinstance(state, dict) and "layout_version" in state


def _kernel_files(directory: Path) -> list[Path]:
    return sorted(p for p in _kernel_candidates(directory) if p.is_file())


def _kernel_candidates(directory: Path) -> list[Path]:
    """Every `kernel.<ext>` entry that could be a kernel source (build outputs and data files left out)."""
    return sorted(p for p in directory.glob(f"{KERNEL_STEM}.*") if p.suffix not in (".so", ".o", ".json"))


def _branch_problem(branch_dir: Path) -> str | None:
    """Why `branches/<name>/` yields no kernel source, or None when it has one."""
    candidates = _kernel_candidates(branch_dir)
    if any(p.is_file() for p in candidates):
        return None
    where = f"{branch_dir}"
    broken = [p for p in candidates if not p.is_file()]
    if broken:
        what = "; ".join(_not_a_file(p) for p in broken)
        return f"{where}: {what}. A branch is one source file, branches/<name>/kernel.<ext>: fix or remove it."
    found = sorted(p.name for p in branch_dir.iterdir())[:8]
    seen = f"it holds {', '.join(found)}" if found else "it is empty"
    return (f"{where} holds no kernel file ({seen}). A branch is branches/<name>/kernel.<ext> (kernel.cpp, "
            "kernel.cu, kernel.hip, kernel.py, kernel.triton.py): add or rename its source, or remove the folder.")


def _not_a_file(path: Path) -> str:
    if path.is_symlink() and not path.exists():
        return f"{path.name} is a symlink to {os.readlink(path)}, which does not exist"
    if path.is_dir():
        return f"{path.name} is a folder, not a source file"
    return f"{path.name} is not a regular file"


def _outside_links(directory: Path, sources: list[Path]) -> dict[Path, Path]:
    """Sources that are symlinks resolving outside the case directory: link -> target."""
    root = directory.resolve()
    found = {}
    for source in sources:
        target = source.resolve()
        if source.is_symlink() and not target.is_relative_to(root):
            found[source] = target
    return found


def case_key(directory: Path, rootdir: Path | None) -> str:
    """How results name a case: its folder relative to pytest's rootdir (`a/vs` and `b/vs` are two cases), or the
    folder's name when it is the rootdir itself (a run of one case folder) or when there is no rootdir; its absolute
    path when it lies outside the rootdir."""
    if rootdir is None:
        return directory.name
    try:
        relative = directory.resolve().relative_to(rootdir.resolve())
    except ValueError:
        return directory.resolve().as_posix()
    return relative.as_posix() if relative.parts else directory.name


def load_case(directory: Path, rootdir: Path | None = None) -> KernelCase:
    """Read a case directory (or a seed run directory) without importing any kernel; `rootdir` (pytest's) makes
    the case's name its key in the results (`case_key`)."""
    if is_seed_run_dir(directory):
        return replace(_load_seed_run(directory), name=case_key(directory, rootdir))
    dims = load_dims(directory / "dims.json")
    case = KernelCase(case_key(directory, rootdir), directory, directory / "ref.py", dims,
                      toolchain_dims=load_toolchain_dims(directory, dims),
                      sizes=read_bench_sizes(directory / "ref.py", dims))
    case.branches, case.layout_problems = find_branches(directory)
    case.outside_links = _outside_links(directory, [b.source for b in case.branches])
    return case


def link_loop(path: Path) -> str | None:
    """Why the folder symlink `path` cannot be walked: it points at a folder that holds it (`loop -> .`,
    `up -> ../..`), so every walk of it (pytest's, ours) would descend without end; None for any other path."""
    if not path.is_symlink():
        return None
    try:
        target = path.resolve(strict=True)
    except (OSError, RuntimeError) as exc:  # a link that names itself: ELOOP
        return (f"{path} is a symlink to {os.readlink(path)}, which cannot be followed ({type(exc).__name__}: "
                f"{exc}). Remove the link.")
    if not target.is_dir() or not path.parent.resolve().is_relative_to(target):
        return None
    return (f"{path} is a symlink to {os.readlink(path)} ({target}), a folder that holds the link itself, so walking "
            "it would never end; it was not walked. A branch is branches/<name>/kernel.<ext>: remove the link, or "
            "link to a branch folder elsewhere.")


def find_branches(directory: Path) -> tuple[list[Branch], dict[str, str]]:
    """The case's kernel sources (baseline and branches/<name>/) without reading anything else, and what is wrong
    with the branch folders that yield none (branch name -> message)."""
    branches = [Branch("baseline", path) for path in _kernel_files(directory)]
    problems: dict[str, str] = {}
    branch_root = directory / "branches"
    if branch_root.is_dir():
        for sub in sorted(p for p in branch_root.iterdir() if p.is_dir()):
            loop = link_loop(sub)
            if loop is not None:
                problems[sub.name] = loop
                continue
            branches += [Branch(sub.name, path) for path in _kernel_files(sub)]
            problem = _branch_problem(sub)
            if problem is not None:
                problems[sub.name] = problem
    elif branch_root.exists():
        problems["branches"] = (f"{branch_root} is not a folder, so no branch is read. Branches live in "
                                "branches/<name>/kernel.<ext>: make it a folder or remove it.")
    return branches, problems


def _load_seed_run(directory: Path) -> KernelCase:
    """The original skill's run layout: state.json, baseline/<file>, iterv<i>/branches/b<k>/kernel.<ext>."""
    state = _seed_state(directory / "state.json")
    ref = _seed_reference(directory, state.get("ref_file"))
    dims = state.get("dims") or {}
    _check_dims(dims, directory / "state.json")
    case = KernelCase(directory.name, directory, ref, dict(dims))
    case.branches = [Branch("baseline", p) for p in sorted((directory / "baseline").glob("*"))
                     if p.suffix in (".hip", ".cu", ".cpp", ".cc", ".cxx", ".py")]
    for iteration in sorted(directory.glob("iterv*"), key=lambda p: int(p.name[5:]) if p.name[5:].isdigit() else 0):
        for sub in sorted((iteration / "branches").glob("b*")):
            case.branches += [Branch(f"{iteration.name}-{sub.name}", p) for p in _kernel_files(sub)]
    return case


def _seed_state(path: Path) -> dict[str, Any]:
    try:
        state = json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, ValueError) as exc:  # ValueError: not JSON, or not UTF-8
        raise CaseError(f"{path} cannot be read as JSON ({type(exc).__name__}: {exc}), so its folder cannot be read as "
                        "a seed run. Restore it: a UTF-8 JSON object with ref_file and dims.") from exc
    if not isinstance(state, dict):
        raise CaseError(f"{path} holds a JSON {type(state).__name__}, not an object with ref_file and dims; it "
                        "cannot be read as a seed run.")
    return state


def _seed_reference(directory: Path, named: Any) -> Path:
    """The ref.py a seed run's state.json names (relative to the run), else the one beside the run.

    Collecting a case imports its ref.py, so the file must belong to the run: inside the run directory, or the case's
    ref.py beside it (where the loop's runs live). A state.json naming code anywhere else is refused, not imported.
    """
    beside = directory.parent / "ref.py"
    if named is not None and not isinstance(named, str):
        raise CaseError(f"{directory}/state.json: ref_file = {_short(named)} is not a path; give the reference's path "
                        f"(e.g. {str(beside)!r}).")
    ref = directory / named if named else beside
    if not ref.is_file():
        ref = beside
    if not ref.is_file():
        raise CaseError(f"{directory}: state.json names ref_file {named!r}, which does not exist, and there is no "
                        f"ref.py beside the run directory. Copy the reference to {beside}.")
    resolved = ref.resolve()
    if not resolved.is_relative_to(directory.resolve()) and resolved != beside.resolve():
        raise CaseError(f"{directory}: state.json names ref_file {named!r}, which is {resolved}, outside the run. "
                        "Collecting a run imports its reference, so it must be the run's own: copy it into the run "
                        f"or to {beside}, and point ref_file there.")
    return ref


def load_dims(path: Path) -> dict[str, Any]:
    if not path.is_file():
        what = "is a folder, not a file" if path.is_dir() else "is missing"
        raise CaseError(f"{path} {what}. Every case needs its default dims, e.g. {{\"N\": 1048576}}.")
    try:
        dims = json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise CaseError(f"{path} is not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset {exc.start}); JSON "
                        "files are UTF-8. Save it as UTF-8, e.g. {\"N\": 1048576}.") from exc
    except json.JSONDecodeError as exc:
        raise CaseError(f"{path} is not valid JSON: {exc}. Write an object such as {{\"N\": 1048576}}.") from exc
    except (OSError, RecursionError) as exc:
        raise CaseError(f"{path} cannot be read ({type(exc).__name__}: {exc}). Make it a readable JSON object such "
                        "as {\"N\": 1048576}.") from exc
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
        raise CaseError(f"{path} must hold a non-empty JSON object of dims, e.g. {{\"N\": 1048576}}; got "
                        f"{_short(dims)}.")
    for key, value in dims.items():
        not_finite = isinstance(value, float) and not math.isfinite(value)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not_finite:
            kind = "not a finite number" if not_finite else f"not a number (it is a {type(value).__name__})"
            raise CaseError(f"{path}: dim {key!r} = {_short(value)} is {kind}; dims are integers (or floats for "
                            f"scalar parameters), e.g. {{{json.dumps(key)}: 1024}}.")
        if isinstance(value, int) and not MIN_DIM <= value <= MAX_DIM:
            raise CaseError(f"{path}: dim {key!r} = {value} does not fit a 64-bit integer; no buffer or C scalar can "
                            "hold it. Give the size you mean to test, e.g. 1048576.")


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."
