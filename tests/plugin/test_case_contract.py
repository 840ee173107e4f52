"""The case contract for code written elsewhere, end to end on the CPU toolchain.

Each fixture case under tests/data/cases/contract_* holds a correct baseline and wrong branches: the
harness must accept what is correct (positional names, accumulation into a declared-zero output, derived
shapes, related dims, long float32 reductions, an allocating solve) and still fail every wrong branch. The cases'
kernel.cu twins get the same verdicts (EXPECTED in tools/device/contract_check.py) on an H200 from
tools/device/contract_check.sh; here the toolchain is pinned to cpu, so the outcome counts are the same on any machine.
"""
from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.conftest import CASES

CPU = ("--dcuopt-toolchain=cpu",)
DRIVER = Path(__file__).parents[2] / "tools" / "device" / "contract_check.py"


def contract_check() -> ModuleType:
    """tools/device/contract_check.py (loaded by path): the expected verdicts, shared with the H200 check."""
    spec = importlib.util.spec_from_file_location("contract_check", DRIVER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def records(pytester: pytest.Pytester, case: str) -> dict[str, dict[str, Any]]:
    state = json.loads((pytester.path / "run" / "state.json").read_text())
    return state["cases"][case]["toolchains"]["cpu"]["branches"]


def assert_expected_verdicts(pytester: pytest.Pytester, *cases: str) -> None:
    driver = contract_check()
    for case in cases:
        found = {branch: driver.observed_verdict(record) for branch, record in records(pytester, case).items()}
        assert found == driver.EXPECTED[case], case


def failure_text(record: dict[str, Any]) -> str:
    return ((record.get("failure") or {}).get("message") or "") + ((record.get("error") or {}).get("message") or "")


def test_solve_names_that_differ_from_the_reference_bind_by_position(run_plugin, pytester: pytest.Pytester) -> None:
    result = run_plugin(CASES / "contract_positional_n", CASES / "contract_rows_cols",
                        args=("-k", "correctness", "--dcuopt-examples=5", *CPU))
    result.assert_outcomes(passed=2, failed=3, deselected=5)
    output = result.stdout.str()
    assert_expected_verdicts(pytester, "contract_positional_n", "contract_rows_cols")
    positional, rows_cols = records(pytester, "contract_positional_n"), records(pytester, "contract_rows_cols")
    assert positional["baseline"]["correct"] is True
    assert positional["baseline"]["observations"]["binding"] == {"by": "position",
                                                                 "map": {"x": "x", "y": "y", "n": "N"}}
    assert rows_cols["baseline"]["correct"] is True
    assert rows_cols["baseline"]["observations"]["binding"]["map"] == {"matrix": "a", "sums": "out", "rows": "M",
                                                                       "cols": "N"}
    # Bound by position is said once per branch in the test output (pytest's warnings summary).
    assert output.count("bound by position (a C ABI is positional)") == 4, output
    # Binding by position does not excuse a wrong kernel.
    assert positional["stops_one_short"]["correct"] is False
    assert rows_cols["rows_cols_swapped"]["correct"] is False
    # Same count, other kinds: refused, naming both signatures.
    refused = failure_text(positional["scalar_first"])
    assert "kernel:    solve(int n, const float* x, float* y)" in refused
    assert "reference: reference(x: buffer, y: buffer, N: int dim)" in refused
    assert "a scalar where the reference has a buffer" in refused


def test_outputs_with_a_declared_initial_state_accumulate_and_stay_guarded(run_plugin,
                                                                          pytester: pytest.Pytester) -> None:
    """Correctness and timing: the timed calls' checks run with the declared start value too."""
    result = run_plugin(CASES / "contract_hist_zero_init", CASES / "contract_initial_value", CASES / "inout_axpy",
                        CASES / "contract_alloc_temp",
                        args=("--dcuopt-examples=10", "--dcuopt-interleave=0", "--benchmark-disable-gc", *CPU))
    assert_expected_verdicts(pytester, "contract_hist_zero_init", "contract_initial_value", "contract_alloc_temp")
    hist, last = records(pytester, "contract_hist_zero_init"), records(pytester, "contract_initial_value")
    axpy, alloc = records(pytester, "inout_axpy"), records(pytester, "contract_alloc_temp")
    for found in (hist["baseline"], last["baseline"], axpy["baseline"], axpy["omp_simd"], alloc["baseline"]):
        assert found["correct"] is True and found["failure"] is None, found["failure"]
        assert found["timing"] is not None and found["timing"]["timed_calls_checked"] >= 2, found["timing"]
    assert "values differ" in failure_text(hist["assigns_instead_of_adds"])
    assert "wrote past the end of buffer 'counts'" in failure_text(hist["clears_one_past"])
    assert "reference=-1.0" in failure_text(last["resets_to_zero"])  # an empty bucket keeps the caller's -1
    assert alloc["skips_last_copy"]["correct"] is False and "'y'" in failure_text(alloc["skips_last_copy"])
    result.assert_outcomes(passed=10, failed=4, skipped=4)


def test_derived_shapes_related_dims_and_long_reductions(run_plugin, pytester: pytest.Pytester) -> None:
    result = run_plugin(CASES / "contract_conv1d_valid", CASES / "contract_window_relation",
                        CASES / "contract_matmul_large_k", args=("-k", "correctness", "--dcuopt-examples=8", *CPU))
    result.assert_outcomes(passed=4, failed=4, deselected=8)
    assert_expected_verdicts(pytester, "contract_conv1d_valid", "contract_window_relation", "contract_matmul_large_k")
    conv, window, matmul = (records(pytester, case) for case in
                            ("contract_conv1d_valid", "contract_window_relation", "contract_matmul_large_k"))
    assert conv["baseline"]["correct"] is True
    assert all(1 <= dims["kernel_size"] <= dims["input_size"] for dims in conv["baseline"]["examples_run"])
    assert {"input_size": 1, "kernel_size": 1} in conv["baseline"]["examples_run"]  # kernel_size followed it down
    assert "wrote past the end of buffer 'out'" in failure_text(conv["full_length_output"])
    assert conv["misses_last_output"]["correct"] is False
    assert window["baseline"]["correct"] is True
    assert all(dims["window"] <= dims["length"] for dims in window["baseline"]["examples_run"])
    assert window["caps_window_at_8"]["failure"]["dims"]["window"] > 8
    # K = 4096 in float32: the correct summation orders pass, the one that drops a term does not.
    assert matmul["baseline"]["correct"] is True and matmul["split_k_partials"]["correct"] is True
    assert {"M": 64, "N": 64, "K": 4096} in matmul["baseline"]["examples_run"]
    assert "float reduction of length K" in failure_text(matmul["drops_last_k"])


def test_a_float32_case_refuses_tf32_inputs_and_a_case_that_accepts_tf32_takes_them(
        run_plugin, pytester: pytest.Pytester, tmp_path: Path) -> None:
    accepting = tmp_path / "contract_matmul_tf32"
    shutil.copytree(CASES / "contract_matmul_precision", accepting)
    with (accepting / "ref.py").open("a") as ref:
        ref.write('\nprecision = "tf32"\n')
    result = run_plugin(CASES / "contract_matmul_precision", accepting,
                        args=("-k", "correctness", "--dcuopt-examples=4", *CPU))
    strict, lenient = records(pytester, "contract_matmul_precision"), records(pytester, "contract_matmul_tf32")
    for branch in ("baseline", "blocked_pairwise", "openmp_reduction"):  # other float32 summation orders
        assert strict[branch]["correct"] is True, failure_text(strict[branch])
        assert lenient[branch]["correct"] is True, failure_text(lenient[branch])
    assert strict["tf32_inputs"]["correct"] is False
    assert "float32 arithmetic" in failure_text(strict["tf32_inputs"])
    assert lenient["tf32_inputs"]["correct"] is True, failure_text(lenient["tf32_inputs"])
    result.assert_outcomes(passed=7, failed=1, deselected=8)


def test_float_scalars_are_drawn_so_a_swapped_or_dropped_one_fails(run_plugin, pytester: pytest.Pytester) -> None:
    result = run_plugin(CASES / "contract_scalars", args=("-k", "correctness", "--dcuopt-examples=6", *CPU))
    scalars = records(pytester, "contract_scalars")
    assert scalars["baseline"]["correct"] is True, failure_text(scalars["baseline"])
    assert any(dims["alpha"] != dims["beta"] for dims in scalars["baseline"]["examples_run"])
    for wrong in ("swaps_alpha_beta", "drops_beta", "drops_eps"):
        assert scalars[wrong]["correct"] is False, wrong
    swapped = scalars["swaps_alpha_beta"]["failure"]
    assert swapped["dims"]["alpha"] != swapped["dims"]["beta"]
    assert "--dcuopt-dims=" in swapped["reproduce"] and '"alpha":' in swapped["reproduce"]
    result.assert_outcomes(passed=1, failed=3, deselected=4)


def test_every_declared_input_set_is_checked_and_recorded(run_plugin, pytester: pytest.Pytester) -> None:
    result = run_plugin(CASES / "contract_input_sets", args=("-k", "correctness", "--dcuopt-examples=12", *CPU))
    sets = records(pytester, "contract_input_sets")
    baseline = sets["baseline"]
    assert baseline["correct"] is True, failure_text(baseline)
    checked = baseline["observations"]["input_sets"]
    assert set(checked) == {"default", "large_logits", "masked"} and all(calls >= 1 for calls in checked.values())
    cheat = sets["no_max_subtraction"]
    assert cheat["correct"] is False
    assert cheat["failure"]["input_set"] == "large_logits"
    assert "input set 'large_logits'" in cheat["failure"]["message"]
    assert "'--dcuopt-input-set=large_logits'" in cheat["failure"]["reproduce"]
    result.assert_outcomes(passed=1, failed=1, deselected=2)
