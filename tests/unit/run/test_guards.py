"""Guard zones and junk-filled outputs of a C ABI binding (toolchains/binding.py), on host buffers.

The "kernels" here are Python callables with the C ABI's arguments (raw addresses and dims), called by
the binding exactly as a loaded `solve` would be.
"""
from __future__ import annotations

import ctypes
from collections.abc import Callable

import numpy as np
import pytest

from pytest_dcuopt.case.buffers import GUARD_ELEMENTS, Domain, decode, poison_value
from pytest_dcuopt.case.cabi import parse_solve_signature
from pytest_dcuopt.toolchains.binding import BindSpec
from pytest_dcuopt.toolchains.cabi_binding import CAbiBinding, guard_elements
from pytest_dcuopt.toolchains.host_runtime import HostRuntime

_C_TYPES = {"float64": "double", "float32": "float", "int16": "int16_t", "uint8": "uint8_t", "int64": "int64_t"}


def element_view(address: int, dtype: str, length: int) -> np.ndarray:
    """The memory at `address` as `length` elements of `dtype` (what a C kernel sees through its pointer)."""
    raw = (ctypes.c_uint8 * (length * np.dtype(dtype).itemsize)).from_address(address)
    return np.frombuffer(raw, dtype=dtype)


def bind(dtype: str, count: int, kernel: Callable[..., None], domains: dict[str, Domain] | None = None,
         signature: str = "const {t}* x, {t}* y, int N") -> CAbiBinding:
    params = parse_solve_signature(f'extern "C" void solve({signature.format(t=_C_TYPES[dtype])}) {{}}')
    shapes = {p.name: (count,) for p in params if p.pointer}
    return CAbiBinding(params, BindSpec({"N": count}, 0, shapes, domains or {}), HostRuntime(), kernel)


def buffer_now(binding: CAbiBinding, name: str) -> np.ndarray:
    """What the buffer `name` holds now (a copy, without its guard): what the kernel sees on its next call. A
    snapshot carries no pointer inputs (the pytest process computes those itself)."""
    return np.array(binding._buffers[name][:binding._sizes[name]])


def test_the_guard_grows_with_the_buffer_between_64_kib_and_4_mib() -> None:
    assert guard_elements(1000, 4) == 16 * 1024  # 64 KiB of float32: N + 4096 is inside
    assert guard_elements(10, 8) == 8 * 1024
    assert guard_elements(1 << 20, 4) == 1 << 20  # as long as the buffer
    assert guard_elements(1 << 30, 4) == 1 << 20  # capped at 4 MiB
    assert guard_elements(1 << 30, 8) >= GUARD_ELEMENTS


@pytest.mark.parametrize("dtype", ["float64", "float32", "int16", "uint8", "int64"])
def test_a_write_into_the_guard_is_named_by_its_element_index(dtype: str) -> None:
    """The old check reported the index of the first differing *byte* as an element: float64 y[N+3] was 'N+30'."""
    count, past = 1000, 3

    def writes_past_the_end(x: int, y: int, n: int) -> None:
        element_view(y, dtype, n + past + 1)[n + past] = 1

    binding = bind(dtype, count, writes_past_the_end)
    binding.reset()
    binding.launch()
    problems = binding.snapshot().problems
    assert len(problems) == 1, problems
    assert f"({count} elements, the last is element {count - 1}): element {count + past}." in problems[0]


def test_a_write_4096_elements_past_the_end_is_inside_the_guard() -> None:
    count, past = 1000, 4096
    if guard_elements(count, 4) <= past:  # pragma: no cover - a write beyond the guard would corrupt this process
        pytest.fail(f"the guard after {count} float32 elements is only {guard_elements(count, 4)} elements long")

    def writes_far_past_the_end(x: int, y: int, n: int) -> None:
        element_view(y, "float32", n + past + 1)[n + past] = 42.0

    binding = bind("float32", count, writes_far_past_the_end)
    binding.reset()
    binding.launch()
    assert [p for p in binding.snapshot().problems if f"element {count + past}." in p]


def test_several_writes_past_the_end_are_reported_as_a_range() -> None:
    def writes_two(x: int, y: int, n: int) -> None:
        view = element_view(y, "float64", n + 10)
        view[n + 1] = view[n + 9] = 5.0

    binding = bind("float64", 100, writes_two)
    binding.reset()
    binding.launch()
    assert "elements 101 to 109 (2 changed)" in binding.snapshot().problems[0]


def test_the_working_set_counts_the_buffers_not_their_guards() -> None:
    binding = bind("float32", 1000, lambda x, y, n: None)
    assert binding.nbytes == 2 * 1000 * 4


def test_scrambled_outputs_hold_finite_junk_and_inputs_keep_their_values() -> None:
    """Before the checked timed calls: pure outputs get finite junk (not NaN: a lazy kernel must not see poison),
    in/out buffers and const inputs keep their values, guards keep their poison."""
    seen: dict[str, np.ndarray] = {}
    count = 500

    def records(x: int, y: int, z: int, n: int) -> None:
        for name, address in (("x", x), ("y", y), ("z", z)):
            seen[name] = element_view(address, "float32", n + guard_elements(n, 4)).copy()

    binding = bind("float32", count, records, domains={"y": Domain("normal", 0.0, 1.0)},
                   signature="const {t}* x, {t}* y, {t}* z, int N")
    binding.reset()
    binding.launch()
    pristine = dict(seen)
    binding.reset()
    binding.scramble_outputs(seed=7)
    binding.launch()
    np.testing.assert_array_equal(seen["x"], pristine["x"])
    np.testing.assert_array_equal(seen["y"], pristine["y"])  # in/out: its input values stay
    assert np.isnan(pristine["z"][:count]).all()
    junk = decode(seen["z"][:count], "float32")
    assert np.isfinite(junk).all() and np.unique(junk).size > count // 2
    assert np.isnan(seen["z"][count:]).all() and np.isnan(poison_value("float32"))
    assert binding.snapshot().problems == []
