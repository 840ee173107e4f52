"""The rules that bound a worker's reported timing by what the pytest process measured (timing/bounds.py), decided
on fixed figures: honest kernels of every scale pass, forged or leftover-work figures are refused."""
from __future__ import annotations

import pytest

from pytest_dcuopt.timing.bounds import (
    BATCH_MAX_CALLS,
    batch_calls,
    batch_problem,
    host_wall_s,
    repeat_problem,
    running_after_problem,
    samples_exceed_wall,
)

HOST, DEVICE = "host perf_counter_ns", "cuda events + delay kernel"


@pytest.mark.parametrize(("mean_s", "per_call_s", "timer"), [
    (1.2e-6, 1.9e-6, HOST),  # a tiny kernel: the batch's per-call cost includes the clock reads the samples miss
    (40e-6, 19e-6, HOST),  # cold samples, hot batch: faster than their mean
    (19.6e-3, 31.3e-3, HOST),  # an OpenMP solve on a loaded 2-core machine (its pool spins after the region)
    (3e-6, 12e-6, DEVICE),  # a GPU kernel shorter than its launch overhead: the events leave the launch out
    (6.3e-3, 1.3e-3, HOST),  # torch, cold samples, hot batch
    (1.09e-3, 3.89e-3, HOST),  # torch's two threads on a busy 2-core machine: a heavy tail, its mean moves
])
def test_honest_figures_pass(mean_s: float, per_call_s: float, timer: str) -> None:
    assert batch_problem(mean_s, per_call_s, batch_calls(mean_s), timer) is None


@pytest.mark.parametrize(("mean_s", "per_call_s", "timer"), [
    (56.8e-6, 697e-6, HOST),  # a clock slowed 50x, timed hot
    (40e-6, 1.0e-3, HOST),  # a detached thread works on for 2 ms after each call
    (1e-3, 8.1e-3, DEVICE),  # device figures an eighth of what back-to-back calls take
    (31.5e-6, 553e-6, HOST),  # a clock slowed 50x, on the same busy machine
])
def test_refuted_figures_are_refused_with_the_numbers(mean_s: float, per_call_s: float, timer: str) -> None:
    problem = batch_problem(mean_s, per_call_s, batch_calls(mean_s), timer)
    assert problem is not None
    assert f"{mean_s * 1e6:.3g} us" in problem and f"{per_call_s * 1e6:.3g} us" in problem


def test_batch_size_targets_a_fixed_time_within_limits() -> None:
    assert 50_000 <= batch_calls(1e-6) <= 50_001
    assert batch_calls(0.5) == 1  # one call already lasts the batch's target
    assert batch_calls(0.03) == 2
    assert batch_calls(1e-9) == BATCH_MAX_CALLS
    assert batch_calls(0.0) == BATCH_MAX_CALLS


def test_samples_cannot_add_up_to_more_than_the_request_took() -> None:
    assert samples_exceed_wall([0.1] * 10, 1.2) is None
    problem = samples_exceed_wall([0.1] * 10, 0.5)
    assert problem is not None and "0.5 s" in problem and "10 samples" in problem


def test_threads_may_spin_briefly_after_a_call_but_not_work_on() -> None:
    assert running_after_problem(0.004, 20e-6) is None  # an OpenMP pool spinning before it sleeps
    assert running_after_problem(0.02774, 13.4e-3) is None  # the example suite's blocked_openmp matmul, busy machine
    assert running_after_problem(0.3, 0.1) is None  # a long call: the bound grows with it
    problem = running_after_problem(0.3, 35e-6)
    assert problem is not None and "300 ms" in problem


def test_a_device_timed_solve_that_waits_is_bounded_by_its_host_time_per_call() -> None:
    # An honest temporary-buffer solve on an H200: 9.79 us of device time per call, ~110 us of host time (cudaMalloc,
    # two launches, cudaFree), 116 us per call back to back.
    assert batch_problem(9.79e-6, 116e-6, 5108, "cuda events (sync hooks)", host_s=110e-6) is None
    refused = batch_problem(9.79e-6, 116e-6, 5108, "cuda events (sync hooks)")
    assert refused is not None and "9.79 us per call" in refused
    # The host time widens only a device clock's bound: the host clock's samples already hold it.
    assert batch_problem(9.79e-6, 116e-6, 5108, "host perf_counter", host_s=110e-6) is not None
    assert host_wall_s({"sync": {"host_wall": {"median_ms": 0.11}}}) == pytest.approx(110e-6)
    assert host_wall_s({}) == 0.0 and host_wall_s({"sync": {"host_wall": None}}) == 0.0


@pytest.mark.parametrize(("fastest_s", "per_call_s", "working_set"), [
    (6.3e-3, 1.3e-3, 0),  # torch, cold samples, hot batch (4.8x)
    (5.859e-3, 2.275e-3, 512 << 10),  # a Python branch: the flush evicts the interpreter too
    (232.6e-6, 118.2e-6, 192 << 10),  # two std::threads, cold samples
    (13.5e-6, 1.2e-6, 4 << 20),  # a tiny kernel 11x faster hot: by microseconds only
    (2.0e-3, 0.15e-3, 8 << 20),  # a kernel that reads little of its 8 MB of inputs: rotating them costs the rest
    (0.5e-3, 0.5e-3, 0),
    (0.19e-3, 0.168e-3, 512 << 10),  # an OpenMP solve, back to back either way (its cold samples took 7.4 ms)
])
def test_a_kernel_no_faster_on_repeated_inputs_than_a_hot_cache_explains_passes(
        fastest_s: float, per_call_s: float, working_set: int) -> None:
    assert repeat_problem(fastest_s, per_call_s, 100, working_set) is None


@pytest.mark.parametrize(("fastest_s", "per_call_s", "working_set"), [
    (1.508e-3, 10.1e-6, 192 << 10),  # a cache keyed on sampled inputs (matmul)
    (5.851e-3, 57.7e-6, 64 << 10),  # a cache keyed on a hash of the whole input (rank)
    (3.56e-3, 27.9e-6, 512 << 10),  # skips when the first and last values are unchanged
    (3.581e-3, 12e-6, 512 << 10),  # skips when three sampled inputs and outputs are unchanged
])
def test_a_kernel_much_faster_on_repeated_inputs_is_refused_with_the_numbers(
        fastest_s: float, per_call_s: float, working_set: int) -> None:
    problem = repeat_problem(fastest_s, per_call_s, 100, working_set)
    assert problem is not None
    assert f"{per_call_s * 1e6:.3g} us" in problem and f"{fastest_s * 1e6:.3g} us" in problem


def test_processes_left_running_are_refused_only_when_they_worked() -> None:
    from pytest_dcuopt.timing.bounds import leftover_problem

    assert leftover_problem(0, 0.0) is None
    assert leftover_problem(3, 0.01) is None  # idle helpers: a tick at most while they were watched
    problem = leftover_problem(2, 0.1)  # two processes spinning through the 50 ms watch
    assert problem is not None and "2 processes" in problem and "100 ms" in problem


@pytest.mark.parametrize(("fastest_s", "snapshot_s", "working_set"), [
    (18.7e-6, 3.5e-3, 512 << 10),  # a snapshot replaced to compute the 64-term series of 65536 elements
    (11.6e-6, 2.9e-3, 512 << 10),  # the same, replaced from C++
])
def test_outputs_computed_while_they_are_read_are_refused(fastest_s: float, snapshot_s: float,
                                                           working_set: int) -> None:
    from pytest_dcuopt.timing.bounds import snapshot_problem

    problem = snapshot_problem(fastest_s, snapshot_s, working_set)
    assert problem is not None and f"{snapshot_s * 1e3:.3g} ms" in problem


@pytest.mark.parametrize(("fastest_s", "snapshot_s", "working_set"), [
    (0.6e-3, 0.4e-3, 512 << 10),  # copying 256 KB of outputs and checking a 256 KB input
    (5e-3, 60e-3, 96 << 20),  # 96 MB of buffers (guards included) read back
    (2e-6, 0.6e-3, 8 << 10),  # a tiny call: the snapshot's fixed cost
])
def test_reading_outputs_back_costs_what_reading_the_buffers_costs(fastest_s: float, snapshot_s: float,
                                                                  working_set: int) -> None:
    from pytest_dcuopt.timing.bounds import snapshot_problem

    assert snapshot_problem(fastest_s, snapshot_s, working_set) is None


def test_a_python_snapshot_has_milliseconds_of_its_own() -> None:
    from pytest_dcuopt.timing.bounds import snapshot_problem

    assert snapshot_problem(69.6e-6, 1.9e-3, 8 << 10, "python") is None  # torch tensors converted, busy machine
    assert snapshot_problem(69.6e-6, 1.9e-3, 8 << 10) is not None


def test_a_gpu_snapshot_has_milliseconds_of_its_own() -> None:
    from pytest_dcuopt.timing.bounds import snapshot_problem

    # an honest Triton row softmax on an H200: a 2.6 us call, its five small buffers read back in 1.78 ms a call
    assert snapshot_problem(2.6e-6, 1.78e-3, 64 << 10, "device") is None
    assert snapshot_problem(2.6e-6, 1.78e-3, 64 << 10, "c") is not None
    assert snapshot_problem(2.6e-6, 8e-3, 64 << 10, "device") is not None  # a snapshot that computes a 6 ms series


def test_the_snapshot_batch_reads_back_at_most_a_gigabyte() -> None:
    from pytest_dcuopt.timing.bounds import SNAPSHOT_MIN_CALLS, batch_calls, snapshot_calls

    assert snapshot_calls(80e-6, 256 << 20) == 4  # an H200 row sum's 256 MB: 4 calls, not 250
    assert snapshot_calls(1e-3, 2 << 30) == SNAPSHOT_MIN_CALLS
    assert snapshot_calls(2e-6, 8 << 10) == batch_calls(2e-6, 0.02)  # small buffers: as many calls as before


def test_the_snapshot_allowance_follows_the_clock() -> None:
    from pytest_dcuopt.run.bounding_calls import snapshot_kind

    assert snapshot_kind("python", "host perf_counter_ns") == "python"
    assert snapshot_kind("cuda", "cuda events") == "device"
    assert snapshot_kind("triton", "cuda events (sync hooks)") == "device"
    assert snapshot_kind("cpu", "host perf_counter_ns") == "c"


def test_the_bounding_batch_does_not_time_binding_the_spec() -> None:
    """The first request with a spec binds it (GPU buffers allocated, inputs uploaded: hundreds of ms), which is no
    call's cost: a batch timed with it refused an honest H200 row sum (429 us a call against a 60.8 us mean)."""
    import time

    from pytest_dcuopt.run.bounding_calls import BoundingCalls

    bound: set[str] = set()

    def exchange(message: dict[str, object], timeout_s: float, what: str) -> dict[str, object]:
        if message.get("op") != "ping" and str(message.get("spec")) not in bound:
            bound.add(str(message.get("spec")))
            time.sleep(0.3)  # binding
        return {}

    calls = BoundingCalls((), "cuda", exchange, lambda: [])
    assert calls._timed_batch("spec at the timing size", 100, 10.0) < 1e-3


def test_a_refute_binds_its_spec_with_one_untimed_call_for_all_its_batches() -> None:
    """Every batch of one refute runs on the spec the first untimed call bound: a call of an emulated Triton kernel
    lasts half a second, and an untimed call before each batch cost seconds per bounded request."""
    from pytest_dcuopt.run.bounding_calls import BoundingCalls

    calls: list[tuple[object, int]] = []

    def exchange(message: dict[str, object], timeout_s: float, what: str) -> dict[str, object]:
        if message.get("op") != "ping":
            calls.append((message.get("op"), int(str(message.get("calls")))))
        return {}

    bounding = BoundingCalls((), "cpu", exchange, lambda: [])
    spec = object()
    for _ in range(3):
        bounding._timed_batch(spec, 10, 10.0)
    bounding._timed_batch(spec, 10, 10.0, op="snap")
    assert calls == [("batch", 1), ("batch", 10), ("batch", 10), ("batch", 10), ("snap", 10)]
