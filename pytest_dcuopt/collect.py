"""Collect a kernel case directory as tests: correctness and benchmark per branch, per toolchain.

A directory with `ref.py` and a `kernel.<ext>` (or a seed `run_*` directory with state.json)
becomes a module of generated tests; no test file is needed. For every toolchain that builds
one of the case's kernel files there is `test_correctness_<toolchain>[<branch>]` and
`test_benchmark_<toolchain>[<branch>]`, plus `test_<observer>_<toolchain>[<branch>]` for the
branches that carry an observer's mark (from ref.py's `pytestmark` / `branch_marks`), e.g.
`test_isa_cpu[...]` for the `isa` mark. ISA tests need no device: they build and disassemble only.
"""
from __future__ import annotations

import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .bench.clock import SampleClock
from .case.marks import read_case_marks
from .case.model import KernelCase, is_case_dir, is_seed_run_dir, load_case
from .errors import CaseError
from .options import TOOLCHAIN_OPTION
from .toolchains import registered_names, toolchain_class

if TYPE_CHECKING:
    from .observe import Observer
    from .session import DcuOptSession


def wants(file_path: Path) -> bool:
    if file_path.name == "ref.py":
        return is_case_dir(file_path.parent)
    return file_path.name == "state.json" and is_seed_run_dir(file_path.parent)


class KernelCaseModule(pytest.Module):
    """A pytest Module whose object is generated from the case instead of imported."""

    def _getobj(self) -> types.ModuleType:
        module = types.ModuleType(f"dcuopt_case_{self.path.parent.name}")
        module.__file__ = str(self.path)
        try:
            case = load_case(self.path.parent)
            module_marks, branch_marks = read_case_marks(case.ref_path, [b.name for b in case.branches])
        except CaseError as exc:
            module.test_case_contract = _failing(str(exc))  # type: ignore[attr-defined]
            return module
        if module_marks:
            module.pytestmark = module_marks  # type: ignore[attr-defined]
        observers = [o for found in self.config.hook.pytest_dcuopt_observers(config=self.config) for o in found]
        for name in selected_toolchains(self.config, case):
            _add_toolchain_tests(module, case, name, observers, module_marks, branch_marks)
        return module


def selected_toolchains(config: pytest.Config, case: KernelCase) -> list[str]:
    wanted = config.getoption("dcuopt_toolchain")
    names = registered_names() if "auto" in wanted else list(wanted)
    unknown = [n for n in names if n not in registered_names()]
    if unknown:
        raise pytest.UsageError(f"{TOOLCHAIN_OPTION}: unknown toolchain(s) {unknown}; registered: {registered_names()}")
    return [n for n in names if case.sources_for(toolchain_class(n).extensions)]


def branch_ids(case: KernelCase, extensions: tuple[str, ...]) -> list[tuple[str, Path]]:
    """Branch names as test ids; a branch with two sources for one toolchain gets the suffix appended."""
    branches = case.sources_for(extensions)
    names = [b.name for b in branches]
    return [(b.name if names.count(b.name) == 1 else f"{b.name}{b.suffix}", b.source) for b in branches]


def _add_toolchain_tests(module: types.ModuleType, case: KernelCase, toolchain: str, observers: Sequence[Observer],
                         module_marks: list[pytest.Mark], branch_marks: dict[str, list[pytest.Mark]]) -> None:
    root = case.root
    ids = branch_ids(case, toolchain_class(toolchain).extensions)
    sources = dict(ids)
    branch_of = {b.source: b.name for b in case.branches}
    own = {name: branch_marks.get(branch_of[source], []) for name, source in ids}
    group = f"{case.name}/{toolchain}"

    def test_correctness(dcuopt_session: DcuOptSession, branch: str, request: pytest.FixtureRequest) -> None:
        variant = dcuopt_session.variant(root, toolchain, branch, sources[branch])
        dcuopt_session.run_correctness(variant, request.node.nodeid)

    def test_benchmark(dcuopt_session: DcuOptSession, branch: str, benchmark: Any,
                       request: pytest.FixtureRequest) -> None:
        variant = dcuopt_session.variant(root, toolchain, branch, sources[branch])
        clock = request.node.get_closest_marker("benchmark").kwargs["timer"]
        dcuopt_session.run_benchmark(variant, benchmark, clock, request.node.nodeid)

    correctness_params = [pytest.param(name, id=name, marks=own[name]) for name, _ in ids]
    bench_mark = pytest.mark.benchmark(group=group, timer=SampleClock())
    bench_params = [pytest.param(name, id=name, marks=[*own[name], bench_mark]) for name, _ in ids]
    marks = [pytest.mark.dcuopt(case=case.name, toolchain=toolchain)]
    setattr(module, f"test_correctness_{toolchain}",
            _decorate(test_correctness, pytest.mark.parametrize("branch", correctness_params), marks))
    setattr(module, f"test_benchmark_{toolchain}",
            _decorate(test_benchmark, pytest.mark.parametrize("branch", bench_params), marks))
    for observer in observers:
        _add_observer_test(module, case, toolchain, ids, observer, module_marks, own, marks)


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

    def test_observer(dcuopt_session: DcuOptSession, branch: str, request: pytest.FixtureRequest) -> None:
        variant = dcuopt_session.variant(root, toolchain, branch, sources[branch])
        dcuopt_session.run_observer(name, variant, request.node)

    test_observer.__name__ = f"test_{name}_{toolchain}"
    setattr(module, f"test_{name}_{toolchain}",
            _decorate(test_observer, pytest.mark.parametrize("branch", params), marks))


def _decorate(function: Callable[..., Any], parametrize: Any, marks: list[Any]) -> Callable[..., Any]:
    for mark in marks:
        function = mark(function)
    return parametrize(function)


def _failing(message: str) -> Callable[[], None]:
    def test_case_contract() -> None:
        pytest.fail(message, pytrace=False)

    return test_case_contract

