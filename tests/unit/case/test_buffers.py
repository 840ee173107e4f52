"""Input domains with special values laid over the draw (-inf entries, denormals)."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from pytest_dcuopt.case.buffers import DomainSpec
from pytest_dcuopt.errors import CaseError

MASKED = ("normal", 0.0, 1.0, {float("-inf"): 0.25, 1e-40: 0.05})


def test_special_values_take_about_their_fraction_of_the_elements() -> None:
    domain = DomainSpec.parse("x", MASKED, set()).at({})
    values = domain.draw(np.random.default_rng(0), 100_000)
    assert 0.24 < float(np.mean(np.isneginf(values))) < 0.26
    assert 0.04 < float(np.mean(values == 1e-40)) < 0.06
    assert np.isfinite(values[~np.isneginf(values)]).all()


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_special_values_survive_every_storage_type_in_draws_and_redraws(dtype: str) -> None:
    domain = DomainSpec.parse("x", ("uniform", -1.0, 1.0, {float("-inf"): 0.5}), set()).at({})
    storage = np.uint16 if dtype == "bfloat16" else np.dtype(dtype)
    for fill in (domain.draw_into, domain.redraw_into):
        out = np.zeros(4096, storage)
        fill(np.random.default_rng(1), out, dtype)
        decoded = out.view(np.uint16).astype(np.uint32) << 16 if dtype == "bfloat16" else out
        as_float = decoded.view(np.float32) if dtype == "bfloat16" else decoded.astype(np.float64)
        assert 0.4 < float(np.mean(np.isneginf(as_float))) < 0.6


def test_the_record_of_a_domain_with_special_values_is_strict_json() -> None:
    recorded = DomainSpec.parse("x", MASKED, set()).at({}).to_json()
    assert json.loads(json.dumps(recorded, allow_nan=False)) == ["normal", 0.0, 1.0, {"-inf": 0.25, "1e-40": 0.05}]


@pytest.mark.parametrize("bad", [{math.nan: 0.1}, {1.0: 0.0}, {1.0: 0.7, 2.0: 0.7}, {}, [(-1.0, 0.1)]])
def test_bad_special_values_are_refused_naming_the_form(bad: object) -> None:
    with pytest.raises(CaseError, match=r"must be \{value: fraction\}"):
        DomainSpec.parse("x", ("normal", 0.0, 1.0, bad), set())


def test_an_int_domain_takes_only_whole_special_values() -> None:
    assert DomainSpec.parse("i", ("int", 0, 9, {-1: 0.1}), set()).at({}).specials == ((-1.0, 0.1),)
    with pytest.raises(CaseError, match=r"whole numbers for 'int'"):
        DomainSpec.parse("i", ("int", 0, 9, {float("-inf"): 0.1}), set())
