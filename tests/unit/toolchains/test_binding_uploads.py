"""A checked call uploads only the buffers that may differ from their pristine
host copy, and never lets a kernel's write into an input reach the next checked call.

At the H200's sizes every upload is hundreds of MB; `reset` used to write every buffer before every checked call,
twice at the start of a timing request. The runtime below is the real host runtime with a record of its writes.
"""
from __future__ import annotations

import ctypes
from collections.abc import Callable

import numpy as np

from pytest_dcuopt.case.cabi import parse_solve_signature
from pytest_dcuopt.run.kernel_calls import _call_on_start, new_inputs_call
from pytest_dcuopt.toolchains.binding import BindSpec
from pytest_dcuopt.toolchains.cabi_binding import CAbiBinding
from pytest_dcuopt.toolchains.host_runtime import HostRuntime

COUNT = 4096


class RecordingRuntime(HostRuntime):
    """The host runtime, recording which buffer each write went to (by its address)."""

    def __init__(self) -> None:
        self.writes: list[int] = []

    def write(self, buffer: np.ndarray, array: np.ndarray) -> None:
        self.writes.append(int(buffer.ctypes.data))
        super().write(buffer, array)


def floats(address: int) -> np.ndarray:
    return np.frombuffer((ctypes.c_float * COUNT).from_address(address), dtype=np.float32)


def bind(kernel: Callable[[np.ndarray, np.ndarray, int], None]) -> tuple[CAbiBinding, RecordingRuntime]:
    params = parse_solve_signature('extern "C" void solve(const float* x, float* y, int N) {}')
    runtime = RecordingRuntime()
    binding = CAbiBinding(params, BindSpec({"N": COUNT}, 7, {"x": (COUNT,), "y": (COUNT,)}), runtime,
                          lambda x, y, n: kernel(floats(x), floats(y), n))
    return binding, runtime


def written(binding: CAbiBinding, runtime: RecordingRuntime) -> list[str]:
    names = {int(buffer.ctypes.data): name for name, buffer in binding._buffers.items()}
    found = [names[address] for address in runtime.writes]
    runtime.writes.clear()
    return found


def double(x: np.ndarray, y: np.ndarray, n: int) -> None:
    y[:n] = 2 * x[:n]


def test_reset_writes_only_what_a_launch_may_have_changed() -> None:
    binding, runtime = bind(double)
    binding.reset()
    assert written(binding, runtime) == []  # just uploaded: nothing to restore
    binding.launch()
    binding.reset()
    assert sorted(written(binding, runtime)) == ["x", "y"]  # a launch may write any buffer, a const one too
    binding.launch()
    binding.snapshot()  # x checked: bit for bit its pristine value, guard included
    binding.reset()
    assert written(binding, runtime) == ["y"]
    binding.launch()
    binding.snapshot()
    binding.reset_inputs()
    assert written(binding, runtime) == []  # the outputs are left for scramble_outputs


def test_a_checked_call_after_timed_calls_that_wrote_an_input_starts_from_the_pristine_input() -> None:
    """A kernel that scribbles on its const input on one timed call: the checked call after it must see the pristine
    input again (and compute from it), not the scribbled one."""
    calls = [0]

    def scribbles_on_its_second_call(x: np.ndarray, y: np.ndarray, n: int) -> None:
        calls[0] += 1
        y[:n] = 2 * x[:n]
        if calls[0] == 2:
            x[:n] = -1.0

    binding, _ = bind(scribbles_on_its_second_call)
    pristine = binding._host["x"][:COUNT].copy()
    before = _call_on_start(binding, "before", ("start",), 1)["snapshot"]
    assert before.problems == []
    binding.launch()  # a timed call: writes into x, unchecked
    after = _call_on_start(binding, "after", ("set", 0), 2)["snapshot"]
    assert after.problems == []
    np.testing.assert_array_equal(after.outputs["y"], 2 * pristine)


def test_a_const_input_modified_by_the_checked_call_itself_is_reported_and_restored() -> None:
    def always_scribbles(x: np.ndarray, y: np.ndarray, n: int) -> None:
        y[:n] = 2 * x[:n]
        x[0] = 99.0

    binding, runtime = bind(always_scribbles)
    snapshot = _call_on_start(binding, "before", ("start",), 1)["snapshot"]
    assert snapshot.problems == ["modified its const input buffer 'x'"]
    written(binding, runtime)
    binding.reset_inputs()
    assert written(binding, runtime) == ["x"]  # not taken as pristine: the snapshot saw it changed
    assert binding._buffers["x"][0] == binding._host["x"][0] != 99.0


def test_after_the_new_inputs_call_the_first_inputs_are_written_back() -> None:
    binding, runtime = bind(double)
    first = binding._host["x"].copy()
    binding.launch()
    [check] = new_inputs_call(binding, 3)
    new_x = binding._redrawn[3]["x"][:COUNT]
    assert not np.array_equal(new_x, first[:COUNT])  # the call saw new values
    np.testing.assert_array_equal(check["snapshot"].outputs["y"], 2 * new_x)
    written(binding, runtime)
    binding.reset()
    assert sorted(written(binding, runtime)) == ["x", "y"]
    np.testing.assert_array_equal(binding._buffers["x"], first)


def test_junk_fills_every_element_with_finite_values_that_change_with_the_seed() -> None:
    from pytest_dcuopt.case.buffers import decode
    from pytest_dcuopt.toolchains.cabi_binding import JUNK_BLOCK, junk_into

    count = 2 * JUNK_BLOCK + 11  # two whole blocks and a partial one
    for dtype, storage in (("float32", np.float32), ("bfloat16", np.uint16), ("int32", np.int32)):
        first, second = np.full(count, 7, storage), np.full(count, 7, storage)
        junk_into(np.random.default_rng(1), first, dtype)
        junk_into(np.random.default_rng(2), second, dtype)
        values = decode(first, dtype)
        assert np.isfinite(values).all() and values.min() >= 0 and (first != 7).mean() > 0.9, dtype
        assert (first != second).mean() > 0.5, dtype  # another seed, other junk
        np.testing.assert_array_equal(first[JUNK_BLOCK:2 * JUNK_BLOCK], first[:JUNK_BLOCK])  # repeated, not drawn
