"""The calls of a timing request (run/kernel_calls.py `TimedCalls`): every call prepared alike, the named ones
snapshotted outside the timed window."""
from __future__ import annotations

import numpy as np

from pytest_dcuopt.run.kernel_calls import TimedCalls
from pytest_dcuopt.run.protocol import CheckPlan
from pytest_dcuopt.timing.host import measure_host
from pytest_dcuopt.timing.policy import TimingPolicy
from pytest_dcuopt.toolchains.binding import roll_offsets, rolled
from tests.unit.run.test_guards import bind, buffer_now, element_view

COUNT = 500
QUICK = TimingPolicy(warmup_s=0.0, min_samples=3, min_time_s=0.0, max_time_s=0.01, cold=False)


def test_every_timed_call_warm_up_included_sees_new_inputs_and_the_named_ones_come_back() -> None:
    seen: list[np.ndarray] = []

    def doubles(x: int, y: int, n: int) -> None:
        values = element_view(x, "float32", n)
        seen.append(values.copy())
        element_view(y, "float32", n)[:] = 2 * values

    binding = bind("float32", COUNT, doubles)
    start = buffer_now(binding, "x")
    timed = TimedCalls(binding, CheckPlan(seed=3, new_inputs_seed=4, checked=(0, 2)))
    samples = measure_host(timed, QUICK)
    assert timed.calls == len(seen) == samples.warmup_calls + len(samples.seconds) >= 4
    assert len({values.tobytes() for values in seen[:4]}) == 4  # another rotation each call (500 possible here)
    for call, values in enumerate(seen):
        assert np.array_equal(values, rolled(start, roll_offsets({"x": COUNT}, 3, call)["x"]))
    assert [check["inputs"] for check in timed.checks] == [("timed", 0), ("timed", 2)]
    for check in timed.checks:
        number = check["inputs"][1]
        assert np.array_equal(check["snapshot"].outputs["y"], 2 * seen[number])
        assert check["snapshot"].inputs == {"N": np.asarray(COUNT)}  # no pointer input: the pytest process has them


def test_in_strict_mode_every_call_comes_back() -> None:
    binding = bind("float32", COUNT, lambda x, y, n: None)
    timed = TimedCalls(binding, CheckPlan(seed=3, new_inputs_seed=4, every_call=True))
    measure_host(timed, QUICK)
    assert [check["inputs"] for check in timed.checks] == [("timed", n) for n in range(timed.calls)]


def test_a_poisoned_start_gives_the_first_call_the_poison_and_a_junk_start_gives_it_junk() -> None:
    from pytest_dcuopt.run.kernel_calls import _call_on_start

    found: list[float] = []

    def doubles(x: int, y: int, n: int) -> None:
        found.append(float(element_view(y, "float32", n)[0]))
        element_view(y, "float32", n)[:] = 2 * element_view(x, "float32", n)

    binding = bind("float32", COUNT, doubles)
    poisoned = _call_on_start(binding, "start", ("start",), 3, poisoned=True)
    junk = _call_on_start(binding, "start", ("start",), 3)
    assert np.isnan(found[0]) and np.isfinite(found[1])
    assert "NaN poison" in poisoned["setup"] and "finite junk" in junk["setup"]
    assert np.array_equal(poisoned["snapshot"].outputs["y"], junk["snapshot"].outputs["y"])


def test_a_snapshot_that_computes_when_read_sees_the_next_calls_inputs() -> None:
    """A checked timed call is snapshotted after the next call's inputs are in: outputs computed at read time (a
    replaced snapshot) belong to other inputs than the call's, while a call's own outputs stay what it wrote."""
    def doubles(x: int, y: int, n: int) -> None:
        element_view(y, "float32", n)[:] = 2 * element_view(x, "float32", n)

    honest, lazy = bind("float32", COUNT, doubles), bind("float32", COUNT, doubles)
    start = buffer_now(honest, "x")
    original = lazy.snapshot

    def computed_when_read() -> object:
        lazy.launch()
        return original()

    lazy.snapshot = computed_when_read
    for binding, right in ((honest, True), (lazy, False)):
        timed = TimedCalls(binding, CheckPlan(seed=3, new_inputs_seed=4, checked=(1,)))
        measure_host(timed, QUICK)
        (check,) = timed.checks
        call_inputs = rolled(start, roll_offsets({"x": COUNT}, 3, 1)["x"])
        assert np.array_equal(check["snapshot"].outputs["y"], 2 * call_inputs) is right


def test_a_checked_call_of_an_in_out_buffer_keeps_what_the_call_left() -> None:
    """y += x on an in/out y: the next call's inputs would rewrite y itself, so the snapshot is taken first."""
    from pytest_dcuopt.case.buffers import Domain

    def accumulates(x: int, y: int, n: int) -> None:
        element_view(y, "float32", n)[:] += element_view(x, "float32", n)

    binding = bind("float32", COUNT, accumulates, domains={"y": Domain("normal", 0.0, 1.0)})
    assert binding.rotates_outputs
    x0, y0 = buffer_now(binding, "x"), buffer_now(binding, "y")
    timed = TimedCalls(binding, CheckPlan(seed=3, new_inputs_seed=4, checked=(1,)))
    measure_host(timed, QUICK)
    (check,) = timed.checks
    offsets = roll_offsets({"x": COUNT, "y": COUNT}, 3, 1)
    expected = rolled(y0, offsets["y"]) + rolled(x0, offsets["x"])
    assert np.allclose(check["snapshot"].outputs["y"], expected)
