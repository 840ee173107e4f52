"""Collect a kernel case directory as tests: correctness and benchmark per branch, per toolchain.

A directory with `ref.py` and a `kernel.<ext>` (or a seed `run_*` directory with state.json)
becomes a module of generated tests; no test file is needed. For every toolchain that builds
one of the case's kernel files there is `test_correctness_<toolchain>[<branch>]` and
`test_benchmark_<toolchain>[<branch>]`.
"""
from __future__ import annotations

import types
from pathlib import Path
from typing import Any, Callable

import pytest

from .case import KernelCase, is_case_dir, is_seed_run_dir, load_case
from .errors import CaseError
from .markers import CASE_MARKER
from .toolchains import registered_names, toolchain_class


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
        except CaseError as exc:
            module.test_case_contract = _failing(str(exc))  # type: ignore[attr-defined]
            return module
        for name in selected_toolchains(self.config, case):
            _add_toolchain_tests(module, case, name)
        return module


def selected_toolchains(config: pytest.Config, case: KernelCase) -> list[str]:
    from .options import BACKEND_OPTION

    wanted = config.getoption(BACKEND_OPTION)
    names = registered_names() if "auto" in wanted else list(wanted)
    unknown = [n for n in names if n not in registered_names()]
    if unknown:
        raise pytest.UsageError(f"{BACKEND_OPTION}: unknown toolchain(s) {unknown}; registered: {registered_names()}")
    return [n for n in names if case.sources_for(toolchain_class(n).extensions)]


def branch_ids(case: KernelCase, extensions: tuple[str, ...]) -> list[tuple[str, Path]]:
    """Branch names as test ids; a branch with two sources for one toolchain gets the suffix appended."""
    branches = case.sources_for(extensions)
    names = [b.name for b in branches]
    return [(b.name if names.count(b.name) == 1 else f"{b.name}{b.source.suffix}", b.source) for b in branches]


def _add_toolchain_tests(module: types.ModuleType, case: KernelCase, toolchain: str) -> None:
    from .plugin import SampleClock

    root = case.root
    ids = branch_ids(case, toolchain_class(toolchain).extensions)
    sources = dict(ids)
    group = f"{case.name}/{toolchain}"

    def test_correctness(dcuopt_session: Any, branch: str, request: pytest.FixtureRequest) -> None:
        variant = dcuopt_session.variant(root, toolchain, branch, sources[branch])
        dcuopt_session.run_correctness(variant, request.node.nodeid)

    def test_benchmark(dcuopt_session: Any, branch: str, benchmark: Any, request: pytest.FixtureRequest) -> None:
        variant = dcuopt_session.variant(root, toolchain, branch, sources[branch])
        clock = request.node.get_closest_marker("benchmark").kwargs["timer"]
        dcuopt_session.run_benchmark(variant, benchmark, clock, request.node.nodeid)

    correctness_params = [pytest.param(name, id=name) for name, _ in ids]
    bench_params = [pytest.param(name, id=name, marks=pytest.mark.benchmark(group=group, timer=SampleClock()))
                    for name, _ in ids]
    marks = [pytest.mark.dcuopt(case=case.name, toolchain=toolchain)]
    setattr(module, f"test_correctness_{toolchain}",
            _decorate(test_correctness, pytest.mark.parametrize("branch", correctness_params), marks))
    setattr(module, f"test_benchmark_{toolchain}",
            _decorate(test_benchmark, pytest.mark.parametrize("branch", bench_params), marks))


def _decorate(function: Callable[..., Any], parametrize: Any, marks: list[Any]) -> Callable[..., Any]:
    for mark in marks:
        function = mark(function)
    return parametrize(function)


def _failing(message: str) -> Callable[[], None]:
    def test_case_contract() -> None:
        pytest.fail(message, pytrace=False)

    return test_case_contract


assert CASE_MARKER == "dcuopt"
