"""Tolerance at size: the float reduction error bound against real float32 accumulation (numpy float32 sums in
several summation orders) and against inputs rounded to tf32's 10-bit mantissa, on independently drawn inputs (what
the harness draws). Fixed seeds: every figure below is the same on every run."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from pytest_dcuopt.case.reference import reduction_bound
from pytest_dcuopt.check.compare import Mismatch, compare, tolerances

K = 4096
Summation = Callable[[np.ndarray, np.ndarray], np.ndarray]


def recursive(products: np.ndarray) -> np.ndarray:
    """Each row summed in float32 in k order (a naive kernel's one accumulator)."""
    return np.cumsum(products, axis=-1, dtype=np.float32)[..., -1]


def interleaved(products: np.ndarray, lanes: int = 8) -> np.ndarray:
    """Eight partial sums over interleaved k (SIMD lanes, split-K), added at the end."""
    parts = recursive(products.reshape(*products.shape[:-1], -1, lanes).swapaxes(-1, -2))
    return recursive(parts)


def pairwise(products: np.ndarray) -> np.ndarray:
    """A tree: neighbours added level by level in float32 (a shuffle or shared-memory reduction)."""
    while products.shape[-1] > 1:
        products = (products[..., 0::2] + products[..., 1::2]).astype(np.float32)
    return products[..., 0]


def blocked(products: np.ndarray, block: int = 64) -> np.ndarray:
    """Blocks of 64 k summed in order, the block sums then summed in order (a tiled kernel)."""
    return recursive(recursive(products.reshape(*products.shape[:-1], -1, block)))


ORDERS = {"recursive": recursive, "interleaved": interleaved, "pairwise": pairwise, "blocked": blocked}


def matmul(a: np.ndarray, b: np.ndarray, order: Callable[[np.ndarray], np.ndarray] = recursive) -> np.ndarray:
    """a @ b with float32 products, summed in float32 in `order`, per output column."""
    columns = [order((a * b[:, j]).astype(np.float32)) for j in range(b.shape[1])]
    return np.stack(columns, axis=1).astype(np.float64)


def tf32(values: np.ndarray) -> np.ndarray:
    """float32 values rounded to nearest even at a 10-bit mantissa (what tensor cores' TF32 mode reads)."""
    bits = values.astype(np.float32).view(np.uint32)
    rounded = (bits + np.uint32(0xFFF) + ((bits >> np.uint32(13)) & np.uint32(1))) & np.uint32(0xFFFFE000)
    return rounded.view(np.float32)


def drawn(seed: int, size: int, k: int = K, std: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (rng.normal(0.0, std, (size, k)).astype(np.float32), rng.normal(0.0, std, (k, size)).astype(np.float32))


def exact(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The float64 reference and the reference on |inputs| (the harness's two passes)."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    return a64 @ b64, np.abs(a64) @ np.abs(b64)


def check(kernel: np.ndarray, a: np.ndarray, b: np.ndarray, arithmetic: str | None = "float32") -> Mismatch | None:
    """`arithmetic` None: the default tolerance alone; else the bound of a reduction computed in that arithmetic."""
    reference, magnitude = exact(a, b)
    bound = None if arithmetic is None else reduction_bound(a.shape[1], arithmetic, magnitude, reference)
    return compare("C", kernel, reference, "float32", kernel.shape,
                   *tolerances("float32", None, None, arithmetic), bound=bound, bound_rule="reduction bound")


@pytest.mark.parametrize("order", sorted(ORDERS))
@pytest.mark.parametrize("k", [256, K, 16384])
def test_float32_sums_in_any_order_stay_well_inside_the_bound(order: str, k: int) -> None:
    a, b = drawn(1, 16, k)
    reference, magnitude = exact(a, b)
    error = np.abs(matmul(a, b, ORDERS[order]) - reference)
    assert float(np.max(error / reduction_bound(k, "float32", magnitude, reference))) < 0.5


def test_a_correct_float32_reduction_fails_the_default_and_passes_the_bound() -> None:
    a, b = drawn(0, 64, std=100.0)
    correct = matmul(a, b)
    assert check(correct, a, b, arithmetic=None) is not None  # the false alarm the bound exists for
    assert check(correct, a, b) is None


@pytest.mark.parametrize("k", [K, 16384])
def test_inputs_rounded_to_tf32_fail_a_float32_case_and_pass_one_that_accepts_tf32(k: int) -> None:
    a, b = drawn(2, 32, k)
    rounded = matmul(tf32(a), tf32(b))
    found = check(rounded, a, b)
    assert found is not None and found.bad > 0.05 * rounded.size, found
    assert check(rounded, a, b, arithmetic="tf32") is None


def test_a_reduction_that_drops_its_last_term_fails_under_the_bound() -> None:
    a, b = drawn(3, 32)
    found = check(matmul(a[:, :-1], b[:-1]), a, b)
    assert found is not None and found.bad > 0.5 * 32 * 32
    assert "reduction bound" in found.describe()


def test_the_bound_covers_unit_scale_matmul_accumulation_with_room_to_spare() -> None:
    """M = N = 64, K = 4096 with inputs in [0, 1) (no cancellation: the partial sums grow to the total, the hardest
    case for the bound's constant): the largest error stays well inside the bound, and dropping the last k fails
    most elements."""
    rng = np.random.default_rng(3)
    a = rng.uniform(0.0, 1.0, (64, K)).astype(np.float32)
    b = rng.uniform(0.0, 1.0, (K, 64)).astype(np.float32)
    reference, magnitude = exact(a, b)
    bound = reduction_bound(K, "float32", magnitude, reference)
    assert float(np.max(np.abs(matmul(a, b) - reference) / bound)) < 0.5
    dropped = matmul(a[:, :-1], b[:-1])
    assert float(np.mean(np.abs(dropped - reference) > bound)) > 0.8  # a product of two U[0,1) can be tiny
