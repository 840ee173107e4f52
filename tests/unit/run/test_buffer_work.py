"""At real sizes: the buffer work around each checked call.

Draws go straight into the buffers in chunks (the same values as one whole-buffer draw, so a seed still gives the
inputs it gave before), the anti-cheat call's new inputs are drawn fast inside their domain, a worker keeps the
costly large binding while small examples come and go, and every timing request says where its time went.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pytest_dcuopt.bench.run import measure, request_phases
from pytest_dcuopt.case import buffers
from pytest_dcuopt.case.buffers import Domain, decode, encode, storage_dtype
from pytest_dcuopt.case.cabi import parse_solve_signature
from pytest_dcuopt.check.checked_calls import TIMING_REPLY_CHECK
from pytest_dcuopt.run.devices import LOCK_DIR_ENV
from pytest_dcuopt.run.kernel_calls import KEPT_BINDINGS, WorkerState
from pytest_dcuopt.toolchains import make_toolchain
from pytest_dcuopt.toolchains.binding import BindSpec
from pytest_dcuopt.toolchains.cache import BuildCache
from pytest_dcuopt.variant import BuildSettings
from tests.conftest import CASES
from tests.unit.run.test_calibration_handover import QUICK, baseline

DOMAINS = [Domain("normal", 0.5, 2.0), Domain("uniform", -3.0, 7.0), Domain("int", -5, 300), Domain.fill(0.0)]
DTYPES = ["float32", "float64", "bfloat16", "float16", "int32", "uint16"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("domain", DOMAINS, ids=lambda d: d.kind)
def test_chunked_draws_give_the_values_and_generator_state_of_one_draw(
        domain: Domain, dtype: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A seed must keep giving the inputs it gave before the draws were chunked (recorded failures replay)."""
    if dtype == "uint16" and domain.kind in ("normal", "uniform"):
        pytest.skip("a signed float domain does not fit an unsigned buffer")
    monkeypatch.setattr(buffers, "DRAW_CHUNK", 100)
    count = 1037  # ten full chunks and a tail
    whole, chunked = np.random.default_rng(11), np.random.default_rng(11)
    expected = encode(domain.draw(whole, count), dtype)
    out = np.empty(count, dtype=storage_dtype(dtype))
    domain.draw_into(chunked, out, dtype)
    np.testing.assert_array_equal(out.view(np.uint8), expected.view(np.uint8))
    assert whole.random() == chunked.random()


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
@pytest.mark.parametrize("domain", DOMAINS[:2], ids=lambda d: d.kind)
def test_new_inputs_stay_inside_the_domain_and_differ_from_the_first_draw(domain: Domain, dtype: str) -> None:
    count = 50_000
    first = np.empty(count, dtype=storage_dtype(dtype))
    domain.draw_into(np.random.default_rng(1), first, dtype)
    again = np.empty_like(first)
    domain.redraw_into(np.random.default_rng(2), again, dtype)
    values = decode(again, dtype)
    low, high = (domain.a - 2 * domain.b, domain.a + 2 * domain.b) if domain.kind == "normal" else (domain.a, domain.b)
    assert np.isfinite(values).all() and values.min() >= low and values.max() <= high
    assert values.std() > (high - low) / 5  # spread over the range, not one repeated value
    assert (again != first).mean() > 0.9


def test_integer_new_inputs_stay_inside_their_bounds() -> None:
    out = np.empty(10_000, dtype=np.int32)
    Domain("int", 3, 9).redraw_into(np.random.default_rng(5), out, "int32")
    assert out.min() == 3 and out.max() == 9


def test_a_worker_keeps_the_largest_binding_while_small_examples_come_and_go(tmp_path: Path) -> None:
    """The default dims' buffers take seconds to draw at real sizes: the boundary and Hypothesis examples checked
    in between must not push them out (they did: the timing request then drew them again)."""
    assert KEPT_BINDINGS == 2
    source = CASES / "xdist_merge" / "kernel.cpp"
    toolchain = make_toolchain("cpu")
    params = parse_solve_signature(source.read_text())
    state = WorkerState()
    state.load({"op": "load", "toolchain": "cpu", "arch": None, "flags": (),
                "artifact": toolchain.build(source, BuildCache(tmp_path / "cache")), "params": params})

    def spec(n: int) -> BindSpec:
        return BindSpec({"N": n}, 0, {"x": (n,), "y": (n,)}, {"x": Domain("normal", 0.0, 1.0)})

    large = state.binding(spec(200_000))
    for n in (1, 7, 1999, 3):
        state.binding(spec(n))
        assert len(state.bindings) == KEPT_BINDINGS
    assert state.binding(spec(200_000)) is large
    assert state.binding(spec(5)) is not None and large in state.bindings.values()


def test_a_timing_request_says_where_its_time_went(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LOCK_DIR_ENV, str(tmp_path / "locks"))
    variant = baseline(BuildSettings(BuildCache(tmp_path / "cache"), None, (), tmp_path / "logs", 60.0))
    assert variant.worker is not None
    try:
        checked = measure(variant, TIMING_REPLY_CHECK, QUICK, 30)
    finally:
        variant.worker.close()
    assert set(checked["phases_s"]) == {"bind", "checked_calls", "transfer", "reference", "compare"}
    assert all(seconds >= 0 for seconds in checked["phases_s"].values())
    assert checked["timed_calls_checked"] >= 4 and checked["phases_s"]["checked_calls"] > 0


def test_the_transfer_phase_is_the_round_trip_less_the_workers_own_time() -> None:
    reply = {"worker_wall_s": 1.5, "worker_phases_s": {"bind": 0.25, "checked_calls": 0.75}}
    assert request_phases(reply, 2.0, 0.125) == {"bind": 0.25, "checked_calls": 0.75, "transfer": 0.5,
                                                 "reference": 0.0, "compare": 0.125}
    assert request_phases(reply, 2.0, 0.5, 0.375)["compare"] == 0.125  # the reference's part is its own phase
    assert request_phases({}, 2.0, 0.0)["transfer"] == 0.0  # an older worker's reply: no split claimed


def kept_in(decoded: Any, array: np.ndarray) -> bool:
    """Whether `array` is (a view of) memory the decoded-input pool keeps."""
    return any(np.shares_memory(array, kept) for kept in decoded.arrays.values())


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int32", "uint8", "float64"])
def test_the_references_inputs_decode_into_reused_memory_with_decodes_values(dtype: str) -> None:
    """check/reference_outputs.py decodes a reference's read-only inputs into memory kept per input name: the values are
    `decode`'s, and a later decode of the same or a smaller size writes into the first one's memory."""
    from pytest_dcuopt.check.reference_outputs import _DecodedInputs

    decoded = _DecodedInputs()
    rng = np.random.default_rng(3)
    first, second = (encode(rng.normal(0, 50, 1000) if "int" not in dtype else rng.integers(0, 200, 1000), dtype)
                     for _ in range(2))
    one = decoded.into("x", first, dtype)
    np.testing.assert_array_equal(one, decode(first, dtype))
    assert one.dtype == decode(first, dtype).dtype
    two = decoded.into("x", second, dtype)
    assert np.shares_memory(two, one) and kept_in(decoded, two)
    np.testing.assert_array_equal(two, decode(second, dtype))
    assert not np.shares_memory(decoded.into("y", first, dtype), one)  # another input: its own memory
    smaller = decoded.into("x", first[:600].reshape(20, 30), dtype)  # another shape, smaller: the same memory
    assert smaller.shape == (20, 30) and np.shares_memory(smaller, one)
    np.testing.assert_array_equal(smaller, decode(first[:600], dtype).reshape(20, 30))
    larger = decoded.into("x", np.concatenate([first, second]), dtype)  # larger: new memory, kept from now on
    assert not np.shares_memory(larger, one) and kept_in(decoded, larger) and not kept_in(decoded, one)


def test_the_decoded_inputs_stay_within_their_memory_bound() -> None:
    from pytest_dcuopt.check.reference_outputs import _DecodedInputs

    decoded = _DecodedInputs()
    decoded.max_bytes = 3 * 8000
    for name in "abcde":
        decoded.into(name, np.zeros(1000, np.float32), "float32")
    assert [key[0] for key in decoded.arrays] == ["c", "d", "e"]  # least recently used out
    huge = decoded.into("f", np.zeros(4000, np.float32), "float32")  # 32 KB of float64: over the whole bound
    assert not kept_in(decoded, huge) and [key[0] for key in decoded.arrays] == ["c", "d", "e"]  # used once, not kept
