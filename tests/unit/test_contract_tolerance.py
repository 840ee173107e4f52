"""Tolerance at size: the float reduction error bound against real float32 accumulation (numpy float32 sums)."""
from __future__ import annotations

import numpy as np

from pytest_dcuopt.case.reference import reduction_bound
from pytest_dcuopt.check.compare import compare, tolerances

K = 4096


def float32_dot_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Each row of a dotted with b, accumulated in float32 in k order (what a naive kernel does)."""
    products = (a.astype(np.float32) * b.astype(np.float32)).astype(np.float32)
    return np.cumsum(products, axis=1, dtype=np.float32)[:, -1].astype(np.float64)


def cancelling_rows(rows: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """Rows of +1000 then -1000 (plus noise): the exact dot products are small, the partial sums are not, so
    float32 rounding leaves an absolute error far above the default atol on an output of modest size."""
    rng = np.random.default_rng(7)
    a = rng.normal(0.0, 1.0, (rows, K)).astype(np.float32)
    a[:, : K // 2] += 1000.0
    a[:, K // 2:] -= 1000.0
    return a, np.ones(K, dtype=np.float32)


def check(kernel: np.ndarray, a: np.ndarray, b: np.ndarray, with_bound: bool) -> object:
    reference = a.astype(np.float64) @ b.astype(np.float64)
    magnitude = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)  # the reference on |inputs|
    bound = reduction_bound(K, "float32", magnitude) if with_bound else None
    return compare("C", kernel, reference, "float32", kernel.shape, *tolerances("float32", None, None), bound=bound,
                   bound_rule="reduction bound")


def test_a_correct_float32_reduction_fails_the_default_and_passes_the_bound() -> None:
    a, b = cancelling_rows()
    correct = float32_dot_rows(a, b)
    assert check(correct, a, b, with_bound=False) is not None  # the false alarm the bound exists for
    assert check(correct, a, b, with_bound=True) is None


def test_a_reduction_that_drops_its_last_term_still_fails_under_the_bound() -> None:
    a, b = cancelling_rows()
    dropped = float32_dot_rows(a[:, :-1], b[:-1])
    found = check(dropped, a, b, with_bound=True)
    assert found is not None and found.bad == a.shape[0]  # every row is wrong by ~1000 against a bound of ~125
    assert "reduction bound" in found.describe()


def test_the_bound_covers_unit_scale_matmul_accumulation_with_room_to_spare() -> None:
    """M = N = 64, K = 4096 with inputs in [0, 1) (no cancellation: the hardest case for the bound's constant):
    the largest error stays well inside the bound, and dropping the last k fails most elements."""
    rng = np.random.default_rng(3)
    a = rng.uniform(0.0, 1.0, (64, K)).astype(np.float32)
    b = rng.uniform(0.0, 1.0, (K, 64)).astype(np.float32)
    reference = a.astype(np.float64) @ b.astype(np.float64)
    bound = reduction_bound(K, "float32", reference)  # all inputs >= 0: the reference is its own magnitude
    correct = np.stack([float32_dot_rows(a, b[:, j]) for j in range(64)], axis=1)
    assert float(np.max(np.abs(correct - reference) / bound)) < 0.5
    dropped = np.stack([float32_dot_rows(a[:, :-1], b[:-1, j]) for j in range(64)], axis=1)
    assert float(np.mean(np.abs(dropped - reference) > bound)) > 0.8  # a product of two U[0,1) can be tiny
