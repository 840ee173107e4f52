"""solve's parameters against the reference's: by name when the names agree, by position when only they differ."""
from __future__ import annotations

from typing import Any

import pytest

from pytest_dcuopt.case.cabi import parse_solve_signature
from pytest_dcuopt.case.parameter_binding import bind_parameters
from pytest_dcuopt.errors import SignatureError


def solve(params: str) -> Any:
    return parse_solve_signature(f'extern "C" void solve({params}) {{}}')


def scale(x, y, N):
    y.copy_(2 * x)


def row_sums(a, out, M, N):
    out.copy_(a.sum(dim=1))


def test_the_reference_names_in_any_order_bind_by_name() -> None:
    bound = bind_parameters(solve("float* y, const float* x, int N"), scale, {"N": 8}, [], "k.cpp")
    assert bound.by == "name" and [p.name for p in bound.params] == ["y", "x", "N"]


def test_other_names_of_the_same_kinds_bind_by_position() -> None:
    bound = bind_parameters(solve("const float* matrix, float* sums, int rows, int cols"), row_sums,
                            {"M": 4, "N": 3}, [], "k.cpp")
    assert bound.by == "position"
    assert bound.to_json() == {"by": "position", "map": {"matrix": "a", "sums": "out", "rows": "M", "cols": "N"}}
    assert [p.name for p in bound.params] == ["a", "out", "M", "N"]
    assert bound.params[0].declaration == "const float* matrix"  # the kernel's own text is kept
    assert "rows -> M" in bound.describe("k.cpp")


@pytest.mark.parametrize(("params", "problem"), [
    ("const float* x, float* y", "solve has 2 parameters, reference 3"),
    ("const float* x, float* y, int n, int m", "solve has 4 parameters, reference 3"),
    ("int n, const float* x, float* y", "a scalar where the reference has a buffer"),
    ("const float* in, float* out, float* n", "a buffer where the reference has a dim"),
    ("const float* y, float* x, int n", "the name 'y' is reference parameter 2"),
])
def test_a_positional_misfit_is_refused_with_both_signatures(params: str, problem: str) -> None:
    with pytest.raises(SignatureError) as raised:
        bind_parameters(solve(params), scale, {"N": 8}, [], "k.cpp")
    message = str(raised.value)
    assert problem in message
    assert f"kernel:    solve({params})" in message
    assert "reference: reference(x: buffer, y: buffer, N: int dim)" in message


def test_a_const_buffer_where_initial_declares_an_output_is_refused() -> None:
    with pytest.raises(SignatureError, match=r"const, but ref\.py `initial` declares .y. an output"):
        bind_parameters(solve("const float* a, const float* b, int n"), scale, {"N": 8}, ["y"], "k.cpp")


def test_an_integer_scalar_for_a_fractional_dim_is_refused() -> None:
    def axpy(x, y, a, N):
        y.add_(a * x)

    with pytest.raises(SignatureError, match="fractional value"):
        bind_parameters(solve("const float* x, float* y, int alpha, int n"), axpy, {"N": 8, "a": 0.5}, [],
                        "k.cpp")
    bound = bind_parameters(solve("const float* x, float* y, float alpha, int n"), axpy, {"N": 8, "a": 0.5}, [],
                            "k.cpp")
    assert bound.mapping == {"x": "x", "y": "y", "alpha": "a", "n": "N"}


def test_a_reference_taking_kwargs_has_no_positions_and_keeps_binding_by_name() -> None:
    def anything(**kwargs):
        return None

    bound = bind_parameters(solve("const float* x, float* y, int n"), anything, {"N": 8}, [], "k.cpp")
    assert bound.by == "name" and [p.name for p in bound.params] == ["x", "y", "n"]
