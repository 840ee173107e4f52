"""The inputs of a C ABI binding (toolchains/binding.py): the worker and the pytest process compute them alike, and
timed calls see them rotated in the same buffers."""
from __future__ import annotations

import numpy as np
import torch

from pytest_dcuopt.case.buffers import Domain
from pytest_dcuopt.case.cabi import parse_solve_signature
from pytest_dcuopt.toolchains.binding import (
    BindSpec,
    draw_inputs,
    draw_layout,
    redrawn_inputs,
    roll_offsets,
    rolled,
    rolled_into,
)
from pytest_dcuopt.toolchains.cabi_binding import CAbiBinding
from pytest_dcuopt.toolchains.host_runtime import HostRuntime
from pytest_dcuopt.toolchains.torch_runtime import DeviceBuffer, roll_bytes
from tests.unit.run.test_guards import bind, buffer_now

COUNT = 1000


def test_the_worker_starts_from_exactly_the_inputs_the_pytest_process_draws() -> None:
    domains = {"y": Domain("uniform", 5.0, 6.0)}  # an in/out buffer: drawn too
    binding = bind("float32", COUNT, lambda x, y, n: None, domains)
    spec = BindSpec({"N": COUNT}, 0, {"x": (COUNT,), "y": (COUNT,)}, domains)
    drawn = draw_inputs(binding.params, spec)
    assert set(drawn) == {"x", "y"}
    assert np.array_equal(buffer_now(binding, "x"), drawn["x"]) and np.array_equal(buffer_now(binding, "y"), drawn["y"])
    binding.redraw_inputs(9)
    assert np.array_equal(buffer_now(binding, "x"), redrawn_inputs(binding.params, spec, 9)["x"])


def test_a_timed_call_sees_its_inputs_rotated_in_the_same_buffers_and_a_const_input_is_not_taken_as_written() -> None:
    seen: list[tuple[int, np.ndarray]] = []

    def records(x: int, y: int, n: int) -> None:
        from tests.unit.run.test_guards import element_view

        seen.append((x, element_view(x, "float32", n).copy()))
        element_view(y, "float32", n)[:] = 1.0

    binding = bind("float32", COUNT, records)
    start = buffer_now(binding, "x")
    for call in range(3):
        offsets = roll_offsets(binding.input_sizes, 77, call)
        binding.prepare_call(offsets)
        binding.launch()
        assert binding.snapshot().problems == []  # the rotation is what the buffer should hold
        assert np.array_equal(seen[-1][1], rolled(start, offsets["x"]))
    assert len({address for address, _ in seen}) == 1  # same pointer every call
    assert len({values.tobytes() for _, values in seen}) == 3  # other inputs every call
    binding.reset()
    assert np.array_equal(buffer_now(binding, "x"), start)  # the starting values come back


def test_rotation_offsets_are_reproducible_and_independent_per_buffer() -> None:
    sizes = {"a": 10_000, "b": 10_000}
    assert roll_offsets(sizes, 5, 3) == roll_offsets(sizes, 5, 3)
    assert roll_offsets(sizes, 5, 3) != roll_offsets(sizes, 5, 4)
    assert len({tuple(roll_offsets(sizes, 5, call).values()) for call in range(20)}) == 20
    assert any(offsets["a"] != offsets["b"] for offsets in (roll_offsets(sizes, 5, call) for call in range(5)))
    array = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = np.empty(12, np.float32)
    rolled_into(out, array.reshape(-1), 5)
    assert np.array_equal(out, rolled(array, 5).reshape(-1)) and rolled(array, 5).shape == (3, 4)


def test_rebinding_writes_another_seeds_inputs_into_the_same_buffers() -> None:
    binding = bind("float32", COUNT, lambda x, y, n: None)
    address = binding._buffers["x"].ctypes.data
    spec = BindSpec({"N": COUNT}, 4, {"x": (COUNT,), "y": (COUNT,)})
    binding.rebind(spec)
    assert binding._buffers["x"].ctypes.data == address
    binding.reset()
    assert np.array_equal(buffer_now(binding, "x"), draw_inputs(binding.params, spec)["x"])


def test_a_layout_is_drawn_alike_from_its_seed_and_domains() -> None:
    layout = {"b": ("float32", (3, 4)), "a": ("int32", (5,))}
    first = draw_layout(layout, 11, {"a": Domain("int", 0, 3)})
    assert first["b"].shape == (3, 4) and first["a"].dtype == np.int32 and first["a"].max() <= 3
    again = draw_layout(dict(reversed(list(layout.items()))), 11, {"a": Domain("int", 0, 3)})
    assert all(np.array_equal(first[name], again[name]) for name in layout)  # the order setup() used is no part
    assert not np.array_equal(first["b"], draw_layout(layout, 12, {})["b"])


class TensorRuntime(HostRuntime):
    """A device runtime's buffers as the torch runtime keeps them (raw bytes in a tensor, `DeviceBuffer`), on the CPU
    here: what `CAbiBinding` does with buffers that are not host arrays, and the torch runtime's own rotation."""

    rolls_on_device = True

    def __init__(self) -> None:
        self.uploads = 0
        self.writes = 0

    def upload(self, array: np.ndarray) -> DeviceBuffer:
        self.uploads += 1
        return DeviceBuffer(torch.from_numpy(array.reshape(-1).view(np.uint8).copy()), array.dtype)

    def download(self, buffer: DeviceBuffer) -> np.ndarray:
        return buffer.tensor.numpy().view(buffer.dtype).copy()

    def write(self, buffer: DeviceBuffer, array: np.ndarray) -> None:
        self.writes += 1
        buffer.tensor.copy_(torch.from_numpy(np.ascontiguousarray(array).reshape(-1).view(np.uint8)))

    def pointer(self, buffer: DeviceBuffer) -> int:
        return int(buffer.tensor.data_ptr())

    def roll_into(self, buffer: DeviceBuffer, source: DeviceBuffer, count: int, offset: int) -> None:
        roll_bytes(buffer.tensor, source.tensor, count * buffer.dtype.itemsize, offset * buffer.dtype.itemsize)


def test_device_buffers_are_rotated_on_the_device_from_one_copy_of_the_starting_values() -> None:
    runtime = TensorRuntime()
    params = parse_solve_signature('extern "C" void solve(const float* x, float* y, int N) {}')
    binding = CAbiBinding(params, BindSpec({"N": COUNT}, 0, {"x": (COUNT,), "y": (COUNT,)}, {}), runtime,
                          lambda *args: None)
    start = runtime.download(binding._buffers["x"])  # guard included
    uploads = runtime.uploads
    for call in range(3):
        offsets = roll_offsets(binding.input_sizes, 77, call)
        binding.prepare_call(offsets)
        now = runtime.download(binding._buffers["x"])
        assert np.array_equal(now[:COUNT], rolled(start[:COUNT], offsets["x"]))
        assert np.array_equal(now[COUNT:], start[COUNT:], equal_nan=True)  # the guard keeps its poison
    assert runtime.uploads == uploads + 1 and runtime.writes == 0  # one device copy of the start, no host round trip
    binding.set_inputs({"x": np.arange(COUNT, dtype=np.float32)})  # other starting values: a fresh device copy
    binding.prepare_call({"x": 5})
    now = runtime.download(binding._buffers["x"])[:COUNT]
    assert np.array_equal(now, rolled(np.arange(COUNT, dtype=np.float32), 5))
    assert runtime.uploads == uploads + 2
