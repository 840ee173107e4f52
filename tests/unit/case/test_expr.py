"""The dims expression language of ref.py: what it computes, and everything it refuses (it never calls eval)."""
from __future__ import annotations

import pytest

from pytest_dcuopt.case.expr import dim_function, dim_value, parse_expr
from pytest_dcuopt.errors import CaseError

DIMS = {"input_size": 100, "kernel_size": 7, "num_bins": 16, "alpha": 0.5}


@pytest.mark.parametrize(("text", "value"), [
    ("input_size - kernel_size + 1", 94),
    ("input_size // kernel_size", 14),
    ("input_size % kernel_size", 2),
    ("-kernel_size + 2 * num_bins", 25),
    ("min(input_size, 64) * max(1, kernel_size - 10)", 64),
    ("num_bins", 16),
])
def test_expressions_compute_from_the_dims(text: str, value: int) -> None:
    assert parse_expr(text, DIMS, "test").evaluate(DIMS) == value


def test_an_expression_knows_the_dims_it_reads() -> None:
    assert parse_expr("input_size - kernel_size + 1", DIMS, "test").names == {"input_size", "kernel_size"}


@pytest.mark.parametrize(("text", "named"), [
    ("__import__('os').system('true')", "__import__"),
    ("input_size.bit_length()", "input_size.bit_length"),
    ("input_size ** 2", "Pow"),
    ("input_size / 2", "Div"),
    ("1.5 * input_size", "1.5"),
    ("abs(input_size)", "abs(input_size)"),
    ("input_size if kernel_size else 1", "if"),
    ("(lambda: 1)()", "lambda"),
    ("[input_size][0]", "[input_size]"),
    ("width - 1", "'width'"),
])
def test_anything_outside_the_language_is_refused_by_name(text: str, named: str) -> None:
    with pytest.raises(CaseError) as raised:
        parse_expr(text, DIMS, "ref.py: shapes['out']")
    assert named in str(raised.value) and "shapes['out']" in str(raised.value)


def test_a_relation_compares_and_chains() -> None:
    relation = parse_expr("1 <= kernel_size <= input_size and num_bins != 0", DIMS, "test", relation=True)
    assert relation.evaluate(DIMS) is True
    assert relation.evaluate({**DIMS, "kernel_size": 101}) is False


def test_a_relation_must_be_a_comparison_and_a_size_must_not_be_one() -> None:
    with pytest.raises(CaseError, match="not a relation"):
        parse_expr("kernel_size + 1", DIMS, "test", relation=True)
    with pytest.raises(CaseError, match="does not allow"):
        parse_expr("kernel_size <= input_size", DIMS, "test")


def test_division_by_zero_names_the_expression_and_the_dims() -> None:
    expression = parse_expr("input_size // kernel_size", DIMS, "test")
    with pytest.raises(CaseError, match="divides by zero") as raised:
        expression.evaluate({**DIMS, "kernel_size": 0})
    assert "input_size // kernel_size" in str(raised.value)


def test_a_function_of_the_dims_is_called_with_the_dims_it_names() -> None:
    shape = dim_function(lambda input_size, kernel_size: (input_size - kernel_size + 1,), DIMS, "test")
    assert shape.evaluate(DIMS) == (94,)
    with pytest.raises(CaseError, match="'width'"):
        dim_function(lambda width: width, DIMS, "test")
    with pytest.raises(CaseError, match="'dims'"):
        dim_function(lambda **dims: 1, DIMS, "test")


def test_dim_values_keep_ints_and_refuse_other_types() -> None:
    assert dim_value(3, DIMS, "test") == 3
    with pytest.raises(CaseError, match="bool"):
        dim_value(True, DIMS, "test")
    with pytest.raises(CaseError, match="float"):
        dim_value(2.5, DIMS, "test")
