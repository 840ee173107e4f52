"""The checked call on new input values among the timed calls: same buffers, new inputs, outputs as the
last call left them; on host buffers with Python "kernels" called with the C ABI's arguments, as in
tests/unit/run/test_guards.py."""
from __future__ import annotations

import numpy as np

from pytest_dcuopt.case.buffers import Domain
from pytest_dcuopt.run.kernel_calls import new_inputs_call
from pytest_dcuopt.toolchains.binding import BindSpec, redrawn_inputs
from tests.unit.run.test_guards import bind, buffer_now, element_view

COUNT = 64


def doubler(seen: list[tuple[int, int]]) -> object:
    def kernel(x: int, y: int, n: int) -> None:
        seen.append((x, y))
        element_view(y, "float32", n)[:] = 2 * element_view(x, "float32", n)
    return kernel


def test_new_inputs_go_into_the_same_buffers_and_the_outputs_keep_the_last_result() -> None:
    seen: list[tuple[int, int]] = []
    binding = bind("float32", COUNT, doubler(seen))
    binding.reset()
    first_x = buffer_now(binding, "x")
    binding.launch()
    first = binding.snapshot()
    binding.redraw_inputs(7)
    before = binding.snapshot()  # nothing launched since: the outputs still hold the last call's result
    assert np.array_equal(before.outputs["y"], first.outputs["y"])
    new_x = buffer_now(binding, "x")
    assert not np.array_equal(new_x, first_x)
    binding.launch()
    after = binding.snapshot()
    assert seen[0] == seen[1], "the call on new inputs must see the same pointers"
    assert np.array_equal(after.outputs["y"], 2 * new_x)
    binding.restore_inputs()
    binding.reset()
    assert np.array_equal(buffer_now(binding, "x"), first_x)


def test_in_out_buffers_are_redrawn_from_their_domain_and_pure_outputs_are_not() -> None:
    domains = {"y": Domain("uniform", 5.0, 6.0)}
    binding = bind("float32", COUNT, lambda x, y, n: None, domains, signature="const {t}* x, {t}* y, int N")
    binding.reset()
    binding.redraw_inputs(3)
    redrawn = buffer_now(binding, "y")
    assert ((redrawn >= 5.0) & (redrawn <= 6.0)).all()


def test_a_kernel_that_returns_a_kept_result_is_wrong_on_thenew_inputs_call() -> None:
    """Memoized on its pointers: computes once, then copies the kept result whenever the pointers repeat."""
    kept: dict[tuple[int, int], np.ndarray] = {}

    def memoizing(x: int, y: int, n: int) -> None:
        out = element_view(y, "float32", n)
        if (x, y) in kept:
            out[:] = kept[(x, y)]
            return
        out[:] = 2 * element_view(x, "float32", n)
        kept[(x, y)] = out.copy()

    binding = bind("float32", COUNT, memoizing)
    binding.reset()
    binding.launch()  # the timed calls
    checks = new_inputs_call(binding, 0)
    assert len(checks) == 1 and "new input values" in checks[0]["call"] and checks[0]["inputs"] == ("new",)
    snapshot = checks[0]["snapshot"]
    new_x = redrawn_inputs(binding.params, BindSpec({"N": COUNT}, 0, {"x": (COUNT,), "y": (COUNT,)}), 0)["x"]
    assert not np.allclose(snapshot.outputs["y"], 2 * new_x)  # what the pytest side then reports
    binding.reset()
    assert np.array_equal(buffer_now(binding, "x"), buffer_now(bind("float32", COUNT, memoizing), "x"))
