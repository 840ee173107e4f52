"""Collect a kernel case directory as tests: correctness and benchmark per branch, per toolchain.

A directory with `ref.py` and a `kernel.<ext>` (or a seed `run_*` directory with state.json)
becomes a module of generated tests; no test file is needed. For every toolchain that builds
one of the case's kernel files there is `test_correctness_<toolchain>[<branch>]` and
`test_benchmark_<toolchain>[<branch>]` (one per benchmark size, `[<branch>-<size>]`, when ref.py declares
`bench_sizes`), plus `test_<observer>_<toolchain>[<branch>]` for the
branches that carry an observer's mark (from ref.py's `pytestmark` / `branch_marks`), e.g.
`test_isa_cpu[...]` for the `isa` mark. ISA tests need no device: they build and disassemble only.
"""
from __future__ import annotations

import types
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .bench.clock import SampleClock
from .case.marks import read_case_marks
from .case.model import Branch, KernelCase, case_key, find_branches, is_case_dir, is_seed_run_dir, link_loop, load_case
from .case.sizes import BenchSize, select_sizes
from .errors import CaseError
from .markers import CASE_MARKER
from .option_declarations import TOOLCHAIN_OPTION
from .report.records import BranchRecord
from .stages import benchmark_test, correctness_test, observer_test
from .toolchains import registered_names, toolchain_class
from .toolchains.base import expand_branches

if TYPE_CHECKING:
    from .observe import Observer
    from .session_view import SessionView


# Benchmark size name -> the `<case>/<toolchain>` groups that declare it, over every case collected in this process:
# what --dcuopt-sizes may name (the session checks it when collection has finished).
DECLARED_SIZES = pytest.StashKey[dict[str, list[str]]]()


# Case directory -> the names of its dims (dims.json and every dims.<toolchain>.json), over every case collected in
# this process: what --dcuopt-dims may name (the session checks it when collection has finished).
DECLARED_DIMS = pytest.StashKey[dict[Path, set[str]]]()


def declared_sizes(config: pytest.Config) -> dict[str, list[str]]:
    return config.stash.setdefault(DECLARED_SIZES, {})


def declared_dims(config: pytest.Config) -> dict[Path, set[str]]:
    return config.stash.setdefault(DECLARED_DIMS, {})


CASE_FILES = ("ref.py", "state.json")  # the files a case is collected from (a case folder, a seed run folder)


@dataclass(frozen=True)
class TestId:
    """What a kernel case's generated test is, as its pytest id spells it: `test_<kind>_<toolchain>[<branch>]`, or
    `[<branch>-<size>]` for a benchmark at one of the case's sizes. The id is printed here (`function_name`,
    `param_id`) and read back here only: exactly from a collected item (`of_item`), or from a node id alone
    (`parse`, for xdist's controller, which sees ids only)."""

    __test__ = False  # a class named Test*: not a test class

    kind: str  # "correctness", "benchmark", or an observer's name ("isa", "ablation", "profile", ...)
    toolchain: str
    branch: str
    size: str | None = None

    @staticmethod
    def function_name(kind: str, toolchain: str) -> str:
        return f"test_{kind}_{toolchain}"

    @staticmethod
    def param_id(branch: str, size: str | None = None) -> str:
        return branch if size is None else f"{branch}-{size}"

    @classmethod
    def of_item(cls, item: pytest.Item) -> TestId | None:
        """The generated test `item` is (from its `dcuopt` mark, its name and its parameters); None for any other."""
        marker = item.get_closest_marker(CASE_MARKER)
        params = getattr(getattr(item, "callspec", None), "params", {})
        if marker is None or "toolchain" not in marker.kwargs or "branch" not in params:
            return None
        toolchain = str(marker.kwargs["toolchain"])
        name, suffix = str(getattr(item, "originalname", item.name)), f"_{toolchain}"
        if not (name.startswith("test_") and name.endswith(suffix)) or len(name) <= len("test_") + len(suffix):
            return None
        size = None if params.get("size") is None else str(params["size"])
        return cls(name[len("test_"):-len(suffix)], toolchain, str(params["branch"]), size)

    @classmethod
    def parse(cls, nodeid: str, toolchains: Iterable[str]) -> tuple[str, TestId] | None:
        """(module, test) of a generated test's node id; None for any other test. The toolchain is the longest of
        `toolchains` that the function name ends with, so a toolchain or observer named with `_` reads whole. An id
        alone does not say where a benchmark's branch ends and its size begins (both may hold a `-`): `branch` is
        the whole bracket and `size` None."""
        module, _, rest = nodeid.partition("::")
        if Path(module).name not in CASE_FILES or "::" in rest or not rest.endswith("]"):
            return None
        name, _, bracket = rest[:-1].partition("[")
        fits = [t for t in toolchains if name.startswith("test_") and name.endswith(f"_{t}")
                and len(name) > len("test_") + len(t) + 1]
        if not fits or not bracket:
            return None
        toolchain = max(fits, key=len)
        return module, cls(name[len("test_"):-len(toolchain) - 1], toolchain, bracket)


def branch_unit(nodeid: str) -> str:
    """The unit of work a test is under `-n` (run/schedule.py): `<module>::<toolchain>::<branch>` for a kernel case's
    test, so a branch's tests go to one worker; any other test is a unit of its own. A branch id with a `-` shares a
    unit with the branches named alike before the `-` (its benchmark sizes follow a `-`)."""
    found = TestId.parse(nodeid, registered_names())
    if found is None:
        return nodeid
    module, test = found
    return f"{module}::{test.toolchain}::{test.branch.split('-')[0]}"


def wants(file_path: Path) -> bool:
    if file_path.name == CASE_FILES[0]:
        return is_case_dir(file_path.parent)
    return file_path.name == CASE_FILES[1] and is_seed_run_dir(file_path.parent)


def ignores(collection_path: Path) -> bool:
    """A symlink in a case's `branches/` that loops back to a folder holding it: pytest's own walk would descend it
    without end. The case's `test_case_layout[<name>]` names it (`model.link_loop`)."""
    parent = collection_path.parent
    return (parent.name == "branches" and is_case_dir(parent.parent)
            and link_loop(collection_path) is not None)


class KernelCaseModule(pytest.Module):
    """A pytest Module whose object is generated from the case instead of imported."""

    def _getobj(self) -> types.ModuleType:
        module = types.ModuleType(f"dcuopt_case_{self.path.parent.name}")
        module.__file__ = str(self.path)
        try:
            case = load_case(self.path.parent, self.config.rootpath)
            case.branches = expand_branches(case.branches, [toolchain_class(n) for n in registered_names()])
            module_marks, branch_marks = read_case_marks(case.ref_path, [b.name for b in case.branches])
        except (CaseError, OSError) as exc:
            message = str(exc) if isinstance(exc, CaseError) else f"reading the case failed: {type(exc).__name__}: " \
                f"{exc}. Make the case's files readable."
            broken = _broken_case_records(self.config, self.path.parent, message)
            module.test_case_contract = _failing("test_case_contract", message, broken)  # type: ignore[attr-defined]
            return module
        if module_marks:
            module.pytestmark = module_marks  # type: ignore[attr-defined]
        declared_dims(self.config)[case.root] = set(case.dims).union(*case.toolchain_dims.values())
        observers = [o for found in self.config.hook.pytest_dcuopt_observers(config=self.config) for o in found]
        toolchains = selected_toolchains(self.config, case)
        for name in toolchains:
            sizes = _chosen_sizes(self.config, case, name)
            _add_toolchain_tests(module, case, name, observers, module_marks, branch_marks, sizes)
        _warn_unknown_size_toolchains(case)
        _add_layout_test(module, self.config, case, toolchains)
        for link, target in case.outside_links.items():  # (Node.warn would recurse here: it reads self.obj)
            warnings.warn_explicit(CaseLayoutWarning(f"{link} is a symlink to {target}, outside the case directory "
                                                     f"{case.root}: that file is what gets built and tested, while "
                                                     "results name the link."), CaseLayoutWarning, str(link), 1)
        return module


class CaseLayoutWarning(UserWarning):
    """Something about a case's files that is allowed but easy to get wrong (a kernel linked from outside)."""


def selected_toolchains(config: pytest.Config, case: KernelCase) -> list[str]:
    wanted = config.getoption("dcuopt_toolchain")
    names = registered_names() if "auto" in wanted else list(wanted)
    unknown = [n for n in names if n not in registered_names()]
    if unknown:
        raise pytest.UsageError(f"{TOOLCHAIN_OPTION}: unknown toolchain(s) {unknown}; registered: {registered_names()}")
    return [n for n in names if case.sources_for(toolchain_class(n).extensions)]


def _chosen_sizes(config: pytest.Config, case: KernelCase, toolchain: str) -> list[BenchSize]:
    """The toolchain's benchmark sizes that --dcuopt-sizes picks; every declared name is remembered for its check."""
    declared = case.for_toolchain(toolchain).bench_sizes
    known = declared_sizes(config)
    for size in declared:
        known.setdefault(size.name, []).append(f"{case.name}/{toolchain}")
    return select_sizes(declared, config.getoption("dcuopt_sizes"))


def _warn_unknown_size_toolchains(case: KernelCase) -> None:
    unknown = sorted(set(case.sizes.by_toolchain) - set(registered_names()))
    if unknown:
        warnings.warn_explicit(CaseLayoutWarning(
            f"{case.ref_path}: bench_sizes_by_toolchain names {unknown}, which no registered toolchain is called "
            f"(registered: {registered_names()}): those sizes are never used. Fix the name, or install the toolchain "
            "plugin."), CaseLayoutWarning, str(case.ref_path), 1)


def branch_ids(case: KernelCase, extensions: tuple[str, ...]) -> list[tuple[str, Path]]:
    """Branch names as test ids. A branch with two sources for one toolchain where one of them is only borrowed
    (a `.hip` file that the cuda toolchain also builds, beside the branch's `.cu`) gets the suffix appended; a
    branch with two sources that only this toolchain builds is ambiguous and left out (`layout_problems` gives it
    a failing layout test)."""
    ambiguous = ambiguous_branches(case.branches, extensions)
    branches = [b for b in case.sources_for(extensions) if b.name not in ambiguous]
    names = [b.name for b in branches]
    return [(b.name if names.count(b.name) == 1 else f"{b.name}{b.suffix}", b.source) for b in branches]


def ambiguous_branches(branches: Sequence[Branch], extensions: tuple[str, ...]) -> dict[str, list[Path]]:
    """Branch name -> its sources, for branches with two or more sources whose suffixes no other registered
    toolchain builds (kernel.cpp and kernel.cc): which one is the branch cannot be told."""
    others = {ext for name in registered_names() for ext in toolchain_class(name).extensions
              if toolchain_class(name).extensions != extensions}
    found: dict[str, list[Path]] = {}
    for branch in branches:
        if branch.suffix in extensions and branch.suffix not in others:
            found.setdefault(branch.name, []).append(branch.source)
    return {name: sources for name, sources in found.items() if len(sources) > 1}


def layout_problems(case: KernelCase, toolchains: Sequence[str]) -> dict[str, tuple[str, list[str]]]:
    """Branch name -> (what is wrong with its files, the toolchains whose results it is recorded under)."""
    problems = {name: (message, list(toolchains)) for name, message in case.layout_problems.items()}
    for toolchain in toolchains:
        for name, sources in ambiguous_branches(case.branches, toolchain_class(toolchain).extensions).items():
            listed = ", ".join(str(s.relative_to(case.root)) for s in sources)
            problems[name] = (f"{case.name}: branch {name!r} has {len(sources)} source files for the {toolchain} "
                              f"toolchain ({listed}), so which one is the branch cannot be told. Keep one, or move "
                              "the other into a branch folder of its own (branches/<name>/kernel.<ext>).", [toolchain])
    buildable = {ext for name in registered_names() for ext in toolchain_class(name).extensions}
    by_name: dict[str, list[Branch]] = {}
    for branch in case.branches:
        by_name.setdefault(branch.name, []).append(branch)
    for name, found in by_name.items():
        if not any(b.suffix in buildable for b in found):
            files = ", ".join(b.source.name for b in found)
            problems[name] = (f"{case.name}: branch {name!r} has no source that a registered toolchain builds (found "
                              f"{files}; the toolchains {registered_names()} build {sorted(buildable)}). Rename the "
                              "file to its toolchain's suffix, or install the toolchain plugin that builds it.",
                              list(toolchains))
    return problems


def _add_toolchain_tests(module: types.ModuleType, case: KernelCase, toolchain: str, observers: Sequence[Observer],
                         module_marks: list[pytest.Mark], branch_marks: dict[str, list[pytest.Mark]],
                         sizes: Sequence[BenchSize] = ()) -> None:
    root = case.root
    ids = branch_ids(case, toolchain_class(toolchain).extensions)
    sources = dict(ids)
    branch_of = {b.source: b.name for b in case.branches}
    own = {name: branch_marks.get(branch_of[source], []) for name, source in ids}
    group = f"{case.name}/{toolchain}"

    def test_correctness(dcuopt_session: SessionView, branch: str, request: pytest.FixtureRequest) -> None:
        variant = dcuopt_session.variant(root, toolchain, branch, sources[branch])
        correctness_test(dcuopt_session, variant, request.node.nodeid)

    def test_benchmark(dcuopt_session: SessionView, branch: str, benchmark: Any,
                       request: pytest.FixtureRequest) -> None:
        variant = dcuopt_session.variant(root, toolchain, branch, sources[branch])
        clock = request.node.get_closest_marker("benchmark").kwargs["timer"]
        benchmark_test(dcuopt_session, variant, benchmark, clock, request.node.nodeid)

    correctness_params = [pytest.param(name, id=name, marks=own[name]) for name, _ in ids]
    marks = [pytest.mark.dcuopt(case=case.name, toolchain=toolchain)]
    setattr(module, TestId.function_name("correctness", toolchain),
            _decorate(test_correctness, pytest.mark.parametrize("branch", correctness_params), marks))
    if sizes:
        setattr(module, TestId.function_name("benchmark", toolchain),
                _sized_benchmark(case, toolchain, ids, own, sizes, marks))
    elif not case.for_toolchain(toolchain).bench_sizes:  # sizes declared, none picked: no benchmark here
        bench_mark = pytest.mark.benchmark(group=group, timer=SampleClock())
        bench_params = [pytest.param(name, id=name, marks=[*own[name], bench_mark]) for name, _ in ids]
        setattr(module, TestId.function_name("benchmark", toolchain),
                _decorate(test_benchmark, pytest.mark.parametrize("branch", bench_params), marks))
    for observer in observers:
        _add_observer_test(module, case, toolchain, ids, observer, module_marks, own, marks)


def _sized_benchmark(case: KernelCase, toolchain: str, ids: list[tuple[str, Path]], own: dict[str, list[pytest.Mark]],
                     sizes: Sequence[BenchSize], marks: list[Any]) -> Callable[..., Any]:
    """`test_benchmark_<toolchain>[<branch>-<size>]`: every branch at every picked size, size by size (the
    baseline first at each, so the others' A/B rounds find it timed there); pytest-benchmark groups by size."""
    root, sources = case.root, dict(ids)
    by_name = {size.name: size for size in sizes}

    def test_benchmark(dcuopt_session: SessionView, branch: str, size: str, benchmark: Any,
                       request: pytest.FixtureRequest) -> None:
        variant = dcuopt_session.variant(root, toolchain, branch, sources[branch])
        clock = request.node.get_closest_marker("benchmark").kwargs["timer"]
        benchmark_test(dcuopt_session, variant, benchmark, clock, request.node.nodeid, by_name[size])

    params = []
    for size in sizes:
        bench_mark = pytest.mark.benchmark(group=f"{case.name}/{toolchain}/{size.name}", timer=SampleClock())
        params += [pytest.param(name, size.name, id=TestId.param_id(name, size.name), marks=[*own[name], bench_mark])
                   for name, _ in ids]
    return _decorate(test_benchmark, pytest.mark.parametrize(("branch", "size"), params), marks)


def _add_observer_test(module: types.ModuleType, case: KernelCase, toolchain: str, ids: list[tuple[str, Path]],
                       observer: Observer, module_marks: list[pytest.Mark], own: dict[str, list[pytest.Mark]],
                       marks: list[Any]) -> None:
    """`test_<observer>_<toolchain>[<branch>]` for the branches whose marks the observer can judge here."""
    cls = toolchain_class(toolchain)
    root, sources = case.root, dict(ids)
    params = [pytest.param(name, id=name, marks=own[name]) for name, _ in ids
              if observer.applies(cls, [*module_marks, *own[name]])]
    if not params:
        return
    name = observer.name

    def test_observer(dcuopt_session: SessionView, branch: str, request: pytest.FixtureRequest) -> None:
        variant = dcuopt_session.variant(root, toolchain, branch, sources[branch])
        observer_test(dcuopt_session, name, variant, request.node)

    test_observer.__name__ = TestId.function_name(name, toolchain)
    setattr(module, test_observer.__name__,
            _decorate(test_observer, pytest.mark.parametrize("branch", params), marks))


def _decorate(function: Callable[..., Any], parametrize: Any, marks: list[Any]) -> Callable[..., Any]:
    for mark in marks:
        function = mark(function)
    return parametrize(function)


def _failing(name: str, message: str, records: list[BranchRecord]) -> Callable[..., None]:
    """A test that fails with `message` and puts `records` (the broken case's branches, with the error) into the
    run's state, so state.json names what could not be collected."""
    def failing_test(dcuopt_session: SessionView) -> None:
        for record in records:
            dcuopt_session.records.setdefault(record.key, record)
        pytest.fail(message, pytrace=False)

    failing_test.__name__ = name
    return failing_test


def _add_layout_test(module: types.ModuleType, config: pytest.Config, case: KernelCase,
                     toolchains: Sequence[str]) -> None:
    """`test_case_layout[<branch>]`: one failing test per branch whose files cannot be a branch."""
    problems = layout_problems(case, toolchains)
    if not problems:
        return
    messages = {name: message for name, (message, _) in problems.items()}
    records = {name: [_error_record(config, case.name, toolchain, name, case.root / "branches" / name, message)
                      for toolchain in (where or ["none"])] for name, (message, where) in problems.items()}

    def test_case_layout(dcuopt_session: SessionView, branch: str) -> None:
        for record in records[branch]:
            dcuopt_session.records.setdefault(record.key, record)
        pytest.fail(messages[branch], pytrace=False)

    params = [pytest.param(name, id=name) for name in problems]
    module.test_case_layout = pytest.mark.parametrize("branch", params)(test_case_layout)  # type: ignore[attr-defined]


def _broken_case_records(config: pytest.Config, root: Path, message: str) -> list[BranchRecord]:
    """The branches of a case that failed to load, one record per branch and toolchain that would have run it (the
    kernel files are listed without reading dims.json or ref.py); one `none` record when no toolchain would."""
    branches, _ = find_branches(root)
    key = case_key(root, config.rootpath)
    records = [_error_record(config, key, name, branch.name, branch.source, message)
               for name in _wanted_toolchains(config) for branch in branches
               if branch.suffix in toolchain_class(name).extensions]
    return records or [_error_record(config, key, "none", "baseline", root, message)]


def _wanted_toolchains(config: pytest.Config) -> list[str]:
    wanted = config.getoption("dcuopt_toolchain")
    return [n for n in (registered_names() if "auto" in wanted else list(wanted)) if n in registered_names()]


def _error_record(config: pytest.Config, case: str, toolchain: str, branch: str, source: Path,
                  message: str) -> BranchRecord:
    try:
        shown = str(source.resolve().relative_to(config.rootpath.resolve()))
    except ValueError:
        shown = str(source)
    return BranchRecord(case, toolchain, branch, shown, error={"kind": "case error", "message": message})

