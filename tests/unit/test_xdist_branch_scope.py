"""Which unit of work a test is under `-n` (collect.branch_unit): a case's tests by branch, anything else alone."""
from __future__ import annotations

import pytest

from pytest_dcuopt.collect import branch_unit as branch_scope


@pytest.mark.parametrize(("nodeid", "unit"), [
    ("kernels/row_sum/ref.py::test_correctness_cpu[baseline]", "kernels/row_sum/ref.py::cpu::baseline"),
    ("kernels/row_sum/ref.py::test_benchmark_cpu[baseline]", "kernels/row_sum/ref.py::cpu::baseline"),
    ("kernels/row_sum/ref.py::test_isa_cpu[baseline]", "kernels/row_sum/ref.py::cpu::baseline"),
    ("kernels/vector_add/ref.py::test_benchmark_cuda[float4-hbm]", "kernels/vector_add/ref.py::cuda::float4"),
    ("kernels/matmul/ref.py::test_isa_triton[triton_dot@hinted]", "kernels/matmul/ref.py::triton::triton_dot@hinted"),
    ("kernels/matmul/ref.py::test_ablation_hip[tiled]", "kernels/matmul/ref.py::hip::tiled"),
])
def test_a_branchs_tests_share_one_unit_per_toolchain(nodeid: str, unit: str) -> None:
    assert branch_scope(nodeid) == unit


def test_the_same_branch_of_two_toolchains_or_two_cases_are_different_units() -> None:
    units = {branch_scope("a/ref.py::test_correctness_cpu[b1]"), branch_scope("a/ref.py::test_correctness_cuda[b1]"),
             branch_scope("b/ref.py::test_correctness_cpu[b1]")}
    assert len(units) == 3


@pytest.mark.parametrize("nodeid", ["tests/test_x.py::test_plain", "kernels/a/ref.py::test_case_contract",
                                    "tests/test_x.py::TestClass::test_method[param]", "tests/test_x.py::test_p[1-2]"])
def test_any_other_test_is_a_unit_of_its_own(nodeid: str) -> None:
    assert branch_scope(nodeid) == nodeid
