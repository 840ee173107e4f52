"""Derived shapes, related dims, dim-dependent input domains and initial states, as ref.py declares them."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import find, given, settings
from hypothesis import strategies as st

from pytest_dcuopt.case.buffers import Domain, resolve_shapes
from pytest_dcuopt.case.cabi import parse_solve_signature
from pytest_dcuopt.case.ref_loader import load_reference
from pytest_dcuopt.case.reference import Reference
from pytest_dcuopt.check.example_dims import boundary_dims, dims_strategy, holds, range_at
from pytest_dcuopt.errors import CaseError

CONV_DIMS = {"input_size": 200, "kernel_size": 9}
CONV = ('extern "C" void solve(const float* signal, const float* taps, float* out, int input_size, '
        'int kernel_size) {}')


def load(tmp_path: Path, declarations: str, dims: dict[str, Any] | None = None) -> Reference:
    path = tmp_path / "ref.py"
    path.write_text("def reference(signal, taps, out, input_size, kernel_size):\n    pass\n\n" + declarations + "\n")
    return load_reference(path, dims or CONV_DIMS)


@pytest.mark.parametrize("out_shape", [
    "('input_size - kernel_size + 1',)",
    "lambda input_size, kernel_size: (input_size - kernel_size + 1,)",
    "lambda input_size, kernel_size: input_size - kernel_size + 1",
])
def test_a_derived_shape_is_computed_at_every_dims(tmp_path: Path, out_shape: str) -> None:
    reference = load(tmp_path, f"shapes = {{'signal': ('input_size',), 'taps': ('kernel_size',), 'out': {out_shape}}}")
    params = parse_solve_signature(CONV)
    assert resolve_shapes(params, reference.shapes, CONV_DIMS, "k")["out"] == (192,)
    assert resolve_shapes(params, reference.shapes, {"input_size": 5, "kernel_size": 5}, "k")["out"] == (1,)
    with pytest.raises(CaseError, match="negative extent") as raised:
        resolve_shapes(params, reference.shapes, {"input_size": 3, "kernel_size": 5}, "k")
    assert "relations" in str(raised.value)


def test_a_shape_expression_is_checked_when_ref_py_loads(tmp_path: Path) -> None:
    with pytest.raises(CaseError, match="'width'"):
        load(tmp_path, "shapes = {'signal': ('input_size',), 'taps': ('kernel_size',), 'out': ('width - 1',)}")


def test_an_input_domain_may_depend_on_the_dims(tmp_path: Path) -> None:
    reference = load(tmp_path, "inputs = {'signal': ('int', 0, 'kernel_size - 1')}")
    assert reference.starting_domains({"input_size": 10, "kernel_size": 4})["signal"] == Domain("int", 0.0, 3.0)
    assert reference.inputs["signal"] == Domain("int", 0.0, 8.0)  # at the default dims
    with pytest.raises(CaseError, match="empty at dims"):
        reference.starting_domains({"input_size": 10, "kernel_size": 0})


@pytest.mark.parametrize(("declared", "value"), [("'zeros'", 0.0), ("-1", -1.0), ("2.5", 2.5)])
def test_an_output_may_start_from_a_declared_value(tmp_path: Path, declared: str, value: float) -> None:
    reference = load(tmp_path, f"initial = {{'out': {declared}}}")
    assert reference.starting_domains(CONV_DIMS)["out"] == Domain.fill(value)
    assert Domain.fill(value).draw(None, 3).tolist() == [value] * 3  # type: ignore[arg-type]


def test_poison_is_the_default_initial_state(tmp_path: Path) -> None:
    assert "out" not in load(tmp_path, "initial = {'out': 'poison'}").starting_domains(CONV_DIMS)


@pytest.mark.parametrize(("declarations", "message"), [
    ("initial = {'out': 'ones'}", "'zeros', a finite number"),
    ("initial = {'out': float('nan')}", "'zeros', a finite number"),
    ("initial = {'out': 'zeros'}\ninputs = {'out': ('normal', 0, 1)}", "both `inputs` and `initial`"),
    ("dim_ranges = {'input_size': (1, 'kernel_size'), 'kernel_size': (1, 'input_size')}", "cycle"),
    ("relations = ['kernel_size > input_size']", "break the declared relations"),
    ("relations = 'kernel_size <= input_size'", "must be a list"),
    ("rtol_scale = 'sqrt_reduction'", "needs the reduction's length"),
    ("reduction = 'kernel_size'\nrtol_scale = 'linear'", "the one rule is 'sqrt_reduction'"),
    ("reduction = 'K'", "'K', which is not a dim"),
    ("atol = lambda kernel_size: kernel_size - 10", "gives -1 at dims"),
    ("atol = lambda K: 1e-4 * K", "'K'"),
])
def test_contract_declarations_are_refused_with_the_fix(tmp_path: Path, declarations: str, message: str) -> None:
    with pytest.raises(CaseError, match=message):
        load(tmp_path, declarations)


def test_a_tolerance_may_be_a_function_of_the_dims(tmp_path: Path) -> None:
    reference = load(tmp_path, "atol = lambda kernel_size: 1e-5 * kernel_size\nrtol = 1e-3")
    assert reference.tolerances_at({"input_size": 50, "kernel_size": 40}) == pytest.approx((4e-4, 1e-3))
    assert reference.atol == pytest.approx(9e-5)  # at the default dims, for the stages that only run there
    (tmp_path / "other").mkdir()
    shrinking = load(tmp_path / "other", "atol = lambda kernel_size: kernel_size - 5")
    with pytest.raises(CaseError, match="finite, non-negative"):
        shrinking.tolerances_at({"input_size": 10, "kernel_size": 1})


def test_sqrt_reduction_scales_rtol_above_1024_terms_only(tmp_path: Path) -> None:
    reference = load(tmp_path, "reduction = 'kernel_size'\nrtol_scale = 'sqrt_reduction'")
    assert reference.scaled_rtol(1e-3, {"input_size": 1, "kernel_size": 4096}) == pytest.approx(2e-3)
    assert reference.scaled_rtol(1e-3, {"input_size": 1, "kernel_size": 64}) == 1e-3
    assert not reference.uses_magnitude_bound("float32")


# ----- related dims in the deterministic examples and the Hypothesis draws ------------------------------------------


def conv_reference(tmp_path: Path) -> Reference:
    return load(tmp_path, "dim_ranges = {'input_size': (1, 300), 'kernel_size': (1, 'min(input_size, 64)')}\n"
                          "relations = ['kernel_size % 2 == 1']")


def test_boundary_dims_follow_dependent_ranges_and_keep_relations(tmp_path: Path) -> None:
    reference = conv_reference(tmp_path)
    examples = boundary_dims(CONV_DIMS, reference.dim_ranges, relations=reference.relations)
    assert examples[0] == CONV_DIMS
    for dims in examples:
        lo, hi, _ = range_at("kernel_size", reference.dim_ranges["kernel_size"], dims)
        assert lo <= dims["kernel_size"] <= hi, dims
        assert holds(reference.relations, dims), dims
    assert {"input_size": 1, "kernel_size": 1} in examples  # kernel_size followed input_size down to 1
    assert {"input_size": 300, "kernel_size": 63} not in examples  # broke the relation (odd only)
    assert any(dims["kernel_size"] == 9 and dims["input_size"] == 300 for dims in examples)


def test_a_range_bound_names_only_other_dims(tmp_path: Path) -> None:
    with pytest.raises(CaseError, match="'input_size'"):
        load(tmp_path, "dim_ranges = {'input_size': (1, 'input_size + 1')}")


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_drawn_dims_respect_dependent_ranges_and_relations(tmp_path_factory: pytest.TempPathFactory,
                                                           data: st.DataObject) -> None:
    reference = conv_reference(tmp_path_factory.mktemp("ref"))
    dims = data.draw(dims_strategy(reference.dim_ranges, CONV_DIMS, reference.relations))
    assert 1 <= dims["input_size"] <= 300
    assert 1 <= dims["kernel_size"] <= min(dims["input_size"], 64)
    assert dims["kernel_size"] % 2 == 1


@pytest.mark.parametrize(("what", "condition"), [
    ("the top of input_size", lambda d: d["input_size"] == 300),
    ("kernel_size at its dependent bound", lambda d: d["kernel_size"] == min(d["input_size"], 64) > 1),
    ("the bottom of both", lambda d: d["input_size"] == 1 and d["kernel_size"] == 1),
])
def test_the_dependent_strategy_reaches_its_bounds(tmp_path: Path, what: str, condition: Any) -> None:
    """The property test above only means something if the strategy is not narrower than the ranges: every bound
    it checks is reached by some draw (a strategy stuck at the defaults would pass it and fail here)."""
    reference = conv_reference(tmp_path)
    strategy = dims_strategy(reference.dim_ranges, CONV_DIMS, reference.relations)
    found = find(strategy, condition, settings=settings(max_examples=2000, database=None))
    assert condition(found), what

