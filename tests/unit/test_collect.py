"""`collect.TestId`: a generated test's id, printed and read back in one place; a toolchain or an observer named
with `_` reads whole, so a branch's tests stay one unit of work under `-n`."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_dcuopt import toolchains
from pytest_dcuopt.collect import TestId, branch_unit

NAMES = ("cpu", "cpu_omp", "hip")


@pytest.mark.parametrize(("kind", "toolchain", "branch"), [
    ("correctness", "cpu", "baseline"), ("benchmark", "cpu_omp", "float4"), ("isa", "cpu_omp", "triton_dot@hinted"),
    ("roofline_check", "hip", "tiled"),
])
def test_what_is_printed_reads_back(kind: str, toolchain: str, branch: str) -> None:
    nodeid = f"kernels/x/ref.py::{TestId.function_name(kind, toolchain)}[{TestId.param_id(branch)}]"
    assert TestId.parse(nodeid, NAMES) == ("kernels/x/ref.py", TestId(kind, toolchain, branch))


def test_the_longest_toolchain_name_that_fits_is_the_toolchain() -> None:
    found = TestId.parse("a/ref.py::test_correctness_cpu_omp[b1]", NAMES)
    assert found is not None and (found[1].kind, found[1].toolchain) == ("correctness", "cpu_omp")
    found = TestId.parse("a/ref.py::test_correctness_cpu[b1]", NAMES)
    assert found is not None and (found[1].kind, found[1].toolchain) == ("correctness", "cpu")


def test_an_id_alone_keeps_a_benchmarks_branch_and_size_together() -> None:
    assert TestId.param_id("float4", "hbm") == "float4-hbm"
    assert TestId.parse("a/ref.py::test_benchmark_cpu[float4-hbm]", NAMES) == (
        "a/ref.py", TestId("benchmark", "cpu", "float4-hbm"))


@pytest.mark.parametrize("nodeid", [
    "tests/test_x.py::test_correctness_cpu[b1]",  # not a case's file
    "a/ref.py::test_case_contract", "a/ref.py::test_case_layout[b1]", "a/ref.py::test_correctness_cuda[b1]",
    "a/ref.py::test__cpu[b1]", "a/ref.py::test_correctness_cpu[]", "a/ref.py::Class::test_correctness_cpu[b1]",
])
def test_anything_else_is_no_generated_test(nodeid: str) -> None:
    assert TestId.parse(nodeid, NAMES) is None


@pytest.fixture
def installed_toolchain(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A toolchain named with `_`, installed as a distribution on the path (a .dist-info with an entry point)."""
    info = tmp_path / "cpu_omp_toolchain-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: cpu-omp-toolchain\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pytest_dcuopt.toolchains]\n"
                                           "cpu_omp = pytest_dcuopt.toolchains.cpu:CpuToolchain\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    toolchains._installed.cache_clear()  # the registry is read once per process
    yield "cpu_omp"
    monkeypatch.undo()
    toolchains._installed.cache_clear()


def test_a_branchs_tests_on_a_toolchain_named_with_an_underscore_are_one_unit(installed_toolchain: str) -> None:
    assert installed_toolchain in toolchains.registered_names()
    units = {branch_unit(f"a/ref.py::test_{kind}_cpu_omp[b1{size}]")
             for kind, size in (("correctness", ""), ("benchmark", ""), ("benchmark", "-small"), ("isa", ""))}
    assert units == {"a/ref.py::cpu_omp::b1"}
    assert branch_unit("a/ref.py::test_correctness_cpu[b1]") == "a/ref.py::cpu::b1"
