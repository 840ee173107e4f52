"""Collect a kernel case directory as tests: correctness and benchmark per branch, per toolchain.

A directory with `ref.py` and a `kernel.<ext>` (or a seed `run_*` directory with state.json)
becomes a module of generated tests; no test file is needed. For every toolchain that builds
one of the case's kernel files there is `test_correctness_<toolchain>[<branch>]` and
`test_benchmark_<toolchain>[<branch>]`, plus `test_isa_<toolchain>[<branch>]` for the branches
that carry an `isa` mark (from ref.py's `pytestmark` / `branch_marks`, see markers.py) on
toolchains with an ISA. ISA tests need no device: they build and disassemble only.
"""
from __future__ import annotations

import types
from pathlib import Path
from typing import Any, Callable

import pytest

from .case import KernelCase, is_case_dir, is_seed_run_dir, load_case
from .errors import CaseError
from .markers import ISA_MARKER, isa_specs, read_case_marks
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
            module_marks, branch_marks = read_case_marks(case.ref_path, [b.name for b in case.branches])
        except CaseError as exc:
            module.test_case_contract = _failing(str(exc))  # type: ignore[attr-defined]
            return module
        if module_marks:
            module.pytestmark = module_marks  # type: ignore[attr-defined]
        for name in selected_toolchains(self.config, case):
            _add_toolchain_tests(module, case, name, module_marks, branch_marks)
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


def _add_toolchain_tests(module: types.ModuleType, case: KernelCase, toolchain: str,
                         module_marks: list[pytest.Mark], branch_marks: dict[str, list[pytest.Mark]]) -> None:
    from .plugin import SampleClock

    root = case.root
    ids = branch_ids(case, toolchain_class(toolchain).extensions)
    sources = dict(ids)
    branch_of = {b.source: b.name for b in case.branches}
    own = {name: branch_marks.get(branch_of[source], []) for name, source in ids}
    group = f"{case.name}/{toolchain}"

    def test_correctness(dcuopt_session: Any, branch: str, request: pytest.FixtureRequest) -> None:
        variant = dcuopt_session.variant(root, toolchain, branch, sources[branch])
        dcuopt_session.run_correctness(variant, request.node.nodeid)

    def test_benchmark(dcuopt_session: Any, branch: str, benchmark: Any, request: pytest.FixtureRequest) -> None:
        variant = dcuopt_session.variant(root, toolchain, branch, sources[branch])
        clock = request.node.get_closest_marker("benchmark").kwargs["timer"]
        dcuopt_session.run_benchmark(variant, benchmark, clock, request.node.nodeid)

    correctness_params = [pytest.param(name, id=name, marks=own[name]) for name, _ in ids]
    bench_params = [pytest.param(name, id=name, marks=[*own[name], pytest.mark.benchmark(group=group, timer=SampleClock())])
                    for name, _ in ids]
    marks = [pytest.mark.dcuopt(case=case.name, toolchain=toolchain)]
    setattr(module, f"test_correctness_{toolchain}",
            _decorate(test_correctness, pytest.mark.parametrize("branch", correctness_params), marks))
    setattr(module, f"test_benchmark_{toolchain}",
            _decorate(test_benchmark, pytest.mark.parametrize("branch", bench_params), marks))
    _add_isa_test(module, case, toolchain, ids, module_marks, own, marks)


def _add_isa_test(module: types.ModuleType, case: KernelCase, toolchain: str, ids: list[tuple[str, Path]],
                  module_marks: list[pytest.Mark], own: dict[str, list[pytest.Mark]], marks: list[Any]) -> None:
    """`test_isa_<toolchain>[<branch>]` for branches with an isa mark that can apply to this toolchain's ISA."""
    cls = toolchain_class(toolchain)
    families = tuple(getattr(cls, "isa_families", (cls.isa_family,)))
    if cls.isa_family == "none":
        return
    root, sources = case.root, dict(ids)
    params = [pytest.param(name, id=name, marks=own[name]) for name, _ in ids
              if any(_could_apply(m, families) for m in [*module_marks, *own[name]])]
    if not params:
        return

    def test_isa(dcuopt_session: Any, branch: str, request: pytest.FixtureRequest) -> None:
        from .isa.spec import IsaMarkError

        variant = dcuopt_session.variant(root, toolchain, branch, sources[branch])
        try:
            specs = isa_specs(request.node)
        except IsaMarkError as exc:
            pytest.fail(str(exc), pytrace=False)
        dcuopt_session.run_isa(variant, specs, request.node.nodeid)

    setattr(module, f"test_isa_{toolchain}", _decorate(test_isa, pytest.mark.parametrize("branch", params), marks))


def _could_apply(mark: pytest.Mark, families: tuple[str, ...]) -> bool:
    """An isa mark whose `family` could cover one of `families` (an invalid one counts, so its error is shown)."""
    from .isa.model import FAMILY_COVERS

    if mark.name != ISA_MARKER:
        return False
    declared = mark.kwargs.get("family")
    if declared is None:
        return True
    names = [declared] if isinstance(declared, str) else declared
    if not isinstance(names, (list, tuple)) or any(n not in FAMILY_COVERS for n in names):
        return True
    return any(f in FAMILY_COVERS[n] for n in names for f in families)


def _decorate(function: Callable[..., Any], parametrize: Any, marks: list[Any]) -> Callable[..., Any]:
    for mark in marks:
        function = mark(function)
    return parametrize(function)


def _failing(message: str) -> Callable[[], None]:
    def test_case_contract() -> None:
        pytest.fail(message, pytrace=False)

    return test_case_contract

