from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_dcuopt.case.buffers import (
    decode,
    encode,
    poison_value,
    resolve_shapes,
    seed_buffer_elements,
)
from pytest_dcuopt.case.cabi import parse_solve_signature
from pytest_dcuopt.check.compare import compare, tolerances
from pytest_dcuopt.check.example_dims import dims_strategy, special_values
from pytest_dcuopt.errors import CaseError


def test_bfloat16_round_trip_is_round_to_nearest_even() -> None:
    values = np.array([1.0, -2.5, 3.140625, 1.00390625, 65504.0])
    decoded = decode(encode(values, "bfloat16"), "bfloat16")
    # 1.00390625 = 1 + 2^-8 lies halfway between two bf16 values and rounds to the even one (1.0).
    assert decoded.tolist() == [1.0, -2.5, 3.140625, 1.0, 65536.0]


def test_poison_is_nan_for_floats_and_a_sentinel_for_ints() -> None:
    assert np.isnan(poison_value("float32"))
    assert np.isnan(decode(np.array([poison_value("bfloat16")], dtype=np.uint16), "bfloat16")[0])
    assert poison_value("int32") == np.iinfo(np.int32).min + 7


def test_declared_shapes_resolve_per_buffer() -> None:
    params = parse_solve_signature(
        'extern "C" void solve(const float* a, const float* b, float* c, int M, int N, int K) {}')
    shapes = resolve_shapes(params, {"a": ("M", "K"), "b": ("K", "N"), "c": ("M", "N")}, {"M": 2, "N": 3, "K": 5}, "k")
    assert shapes == {"a": (2, 5), "b": (5, 3), "c": (2, 3)}


def test_missing_shape_entry_names_the_parameter() -> None:
    params = parse_solve_signature('extern "C" void solve(const float* a, float* c, int N) {}')
    with pytest.raises(CaseError, match="no entry for pointer parameter 'c'"):
        resolve_shapes(params, {"a": ("N",)}, {"N": 4}, "k.cpp")


def test_seed_rule_refuses_three_dims_instead_of_under_allocating() -> None:
    params = parse_solve_signature('extern "C" void solve(const float* x, float* y, int B, int S, int D) {}')
    with pytest.raises(CaseError, match="under-allocates"):
        seed_buffer_elements(params, {"B": 8, "S": 4096, "D": 128}, "k.cpp")


def test_seed_rule_refuses_instead_of_capping() -> None:
    params = parse_solve_signature('extern "C" void solve(const float* x, float* y, int M, int N) {}')
    assert seed_buffer_elements(params, {"M": 64, "N": 32}, "k") == 2048
    with pytest.raises(CaseError, match="capped at silently"):
        seed_buffer_elements(params, {"M": 1 << 15, "N": 1 << 15}, "k")


def test_compare_counts_unwritten_elements() -> None:
    ref = np.arange(8, dtype=np.float64)
    kernel = ref.copy()
    kernel[-1] = np.nan
    found = compare("y", kernel, ref, "float32", (8,), *tolerances("float32", None, None))
    assert found is not None and found.bad == 1 and found.unwritten == 1
    assert found.worst[0]["index"] == 7


def test_scale_guard_rejects_all_zero_output_within_atol() -> None:
    ref = np.full(100, 3e-6)  # every element is within atol=1e-4 of zero
    found = compare("y", np.zeros(100), ref, "float32", (100,), 1e-4, 1e-3)
    assert found is not None and "scale-aware guard" in found.reason


def test_compare_accepts_rounding_noise() -> None:
    ref = np.random.default_rng(0).normal(size=1000)
    kernel = ref.astype(np.float32).astype(np.float64)
    assert compare("y", kernel, ref, "float32", (1000,), *tolerances("float32", None, None)) is None


def test_multidimensional_worst_index() -> None:
    ref = np.zeros(6)
    kernel = ref.copy()
    kernel[4] = 1.0
    found = compare("c", kernel, ref, "float32", (2, 3), 1e-4, 1e-3)
    assert found is not None and found.worst[0]["index"] == [1, 1]


def test_special_values_reach_tails_and_primes() -> None:
    values = special_values(1, 100, 1)
    assert {1, 2, 7, 31, 61, 63, 65, 100}.issubset(values)
    assert all(v % 4 == 0 for v in special_values(4, 64, 4))


@given(st.data())
def test_dims_strategy_respects_ranges_and_multiples(data: st.DataObject) -> None:
    dims = data.draw(dims_strategy({"N": (3, 50, 4), "M": (1, 7)}, {"N": 16, "M": 2, "alpha": 0.5}))
    assert 3 <= dims["N"] <= 50 and dims["N"] % 4 == 0
    assert dims["M"] in range(1, 8) and dims["alpha"] == 0.5


@pytest.mark.parametrize("seed", range(6))
def test_compare_in_chunks_gives_the_same_verdict_as_one_pass(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """compare() works in chunks of COMPARE_CHUNK elements (big outputs stay cache-sized); its Mismatch (counts,
    max error, the worst elements in order, the scale guard) must not depend on the chunk size."""
    from pytest_dcuopt.check import compare as module

    rng = np.random.default_rng(seed)
    n = 2000
    reference = rng.normal(size=n) * (1e-6 if seed == 5 else 1.0)  # seed 5: tiny values, the scale guard's case
    kernel = (reference + rng.normal(scale=[1e-6, 1e-3, 1e-1, 1e-2, 1e-5, 0][seed], size=n)).astype(np.float32)
    if seed == 5:
        kernel[:] = 0
    kernel[rng.integers(0, n, size=seed)] = np.nan
    results = []
    for chunk in (1 << 20, 7, 333):
        monkeypatch.setattr(module, "COMPARE_CHUNK", chunk)
        found = module.compare("y", kernel, reference, "float32", (n,), 1e-4, 1e-3)
        results.append(None if found is None else found.to_json())
    assert results[0] == results[1] == results[2]
    assert (results[0] is None) == (seed == 0)  # the others have NaNs, large errors, or trip the scale guard


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_the_chunked_comparison_names_the_same_mismatches_as_one_naive_pass(data: st.DataObject) -> None:
    """Chunks, the skipped clean chunks and the partial sort of the worst elements must not change a verdict:
    the count, the unwritten count, the largest error and the five worst elements (ties: lower index first)."""
    from pytest_dcuopt.check import compare as module

    size = data.draw(st.integers(1, 300))
    values = st.sampled_from([0.0, 1.0, -2.0, 0.5, 1e-9, np.nan, np.inf])
    reference = np.array(data.draw(st.lists(values, min_size=size, max_size=size)), dtype=np.float64)
    kernel = np.array(data.draw(st.lists(values, min_size=size, max_size=size)), dtype=np.float32)
    chunk = data.draw(st.sampled_from([1, 7, 64, 1 << 20]))
    original = module.COMPARE_CHUNK
    module.COMPARE_CHUNK = chunk
    try:
        found = module.compare("y", kernel, reference, "float32", (size,), 1e-3, 1e-3)
    finally:
        module.COMPARE_CHUNK = original
    k, r = kernel.astype(np.float64), reference
    with np.errstate(invalid="ignore"):
        diff = np.abs(k - r)
        bad = ~((diff <= 1e-3 + 1e-3 * np.abs(r)) | (np.isnan(k) & np.isnan(r)))
    if not bad.any():
        assert found is None or found.reason != "values differ"
        return
    assert found is not None and found.bad == int(bad.sum())
    assert found.unwritten == int((~np.isfinite(k) & np.isfinite(r)).sum())
    score = np.where(np.isfinite(diff), diff, np.inf)
    assert found.max_abs_err == float(score.max())
    expected = sorted(np.flatnonzero(bad), key=lambda i: (-score[i], i))[:5]
    assert [w["index"] for w in found.worst] == [int(i) for i in expected]
