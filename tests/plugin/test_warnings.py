"""What the run warns about, and where: a positional binding points at the kernel's `solve` line, and
`--benchmark-disable` (each benchmark test calls its branch once, checked) raises no pytest-benchmark warning."""
from __future__ import annotations

from tests.conftest import CASES
from tests.context import skip_if_no_gxx

pytestmark = skip_if_no_gxx


def test_a_positional_binding_warning_points_at_the_kernel_file(run_plugin) -> None:
    result = run_plugin(CASES / "contract_positional_n",
                        args=("--dcuopt-toolchain=cpu", "-k", "correctness and baseline"))
    output = "\n".join(result.outlines)
    assert "PositionalBindingWarning" in output, output
    result.stdout.fnmatch_lines(["*contract_positional_n/kernel.cpp:2: PositionalBindingWarning*"])
    assert "variant.py" not in output, output


def test_benchmark_disable_checks_each_branch_once_without_benchmark_warnings(run_plugin) -> None:
    result = run_plugin(CASES / "python_scale", args=("--benchmark-disable", "-k", "benchmark"))
    result.assert_outcomes(passed=1)
    output = "\n".join(result.outlines + result.errlines)
    assert "PytestBenchmarkWarning" not in output and "not used at all" not in output, output
