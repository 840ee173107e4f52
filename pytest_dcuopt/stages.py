"""The bodies of the generated tests: each starts its branch (`context.require_built`), runs its stage (check,
bench, gate, an observer) on the session's variants, fires the plugin's hooks and fails or skips through pytest.

`collect.py` generates `test_correctness_<toolchain>`, `test_benchmark_<toolchain>` and `test_<observer>_<toolchain>`
whose bodies are `correctness_test`, `benchmark_test` and `observer_test`; `dcuopt_case.check` is `case_check`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from .bench.run import (
    BenchPoint,
    benchmarks_disabled,
    bind_spec,
    default_point,
    interleave_with_baseline,
    measure,
    run_benchmark,
    run_disabled,
    size_point,
    timing_at,
)
from .check.before_timing import check_default_once, ready_to_time
from .check.checked_calls import TIMING_REPLY_CHECK, checked_call
from .check.compare import reproduce_command
from .check.correctness import CheckSettings, run_correctness
from .context import require_built
from .errors import CaseError, TimedCallsWrong
from .gate import REPORT_NAME as GATE_REPORT
from .gate import entry as gate_entry
from .run.devices import xdist_worker_id

if TYPE_CHECKING:
    from .bench.clock import SampleClock
    from .case.sizes import BenchSize
    from .session_view import SessionView
    from .variant import Variant


def prepare(session: SessionView, variant: Variant) -> None:
    """Skip when the toolchain cannot run here (saying so in the record); otherwise build and load the branch."""
    require_built(session, variant, runs_kernel=True, record_skip=True)


def correctness_test(session: SessionView, variant: Variant, nodeid: str) -> None:
    """`test_correctness_<toolchain>[<branch>]`."""
    prepare(session, variant)
    options = session.options
    settings = CheckSettings(options.examples, options.hypothesis_profile, options.replay_dims, options.replay_seed,
                             options.replay_input_set)
    failure = run_correctness(variant, settings, nodeid)
    session.config.hook.pytest_dcuopt_branch_checked(variant=variant, config=session.config, failure=failure)
    if failure is not None:
        pytest.fail(with_regression(session, variant, "correctness", failure), pytrace=False)


def case_check(session: SessionView, variant: Variant, dims: dict[str, Any], seed: int, nodeid: str) -> None:
    """One checked call (the `dcuopt_case` fixture); raises AssertionError with the mismatch."""
    prepare(session, variant)
    checked_call(variant, dims, seed, nodeid, reproduce=reproduce_command(nodeid))


def benchmark_test(session: SessionView, variant: Variant, benchmark: Any, clock: SampleClock, nodeid: str,
                  size: BenchSize | None = None) -> None:
    """`test_benchmark_<toolchain>[<branch>]`, or `[<branch>-<size>]` for one of the case's benchmark sizes."""
    if size is not None:  # listed at its size whatever happens below (a skip, a failure before timing)
        order = next((i for i, declared in enumerate(variant.case.bench_sizes) if declared.name == size.name), 0)
        variant.record.size_entry(size.name, variant.case.dims_at(size), order)
    prepare(session, variant)
    if variant.verdicts.failed_correctness:
        reason = f"not benchmarked: {variant.label} failed its correctness test"
        variant.record.skipped = reason
        pytest.skip(reason)
    point = bench_point(variant, size)
    if benchmarks_disabled(session.config):  # pytest-benchmark's semantics: run once, no statistics
        # Through the fixture, which calls it once when disabled: an unused fixture warns at teardown.
        wrong = benchmark(run_disabled, variant, check_default_once, nodeid, point)
        if wrong is not None:
            pytest.fail(with_regression(session, variant, "correctness", wrong), pytrace=False)
        return
    # Every check before the first timing (check/), then the timings (bench/), each reply checked by check/'s rule.
    ready = ready_to_time(variant, point.dims, point.size, nodeid, lambda: baseline_for(session, variant))
    if ready.wrong is not None:
        variant.record.skipped = f"not benchmarked: {variant.label} failed the boundary dims checked before timing"
        pytest.fail(with_regression(session, variant, "correctness", ready.wrong), pytrace=False)
    options = session.options
    samples = run_benchmark(variant, TIMING_REPLY_CHECK, benchmark, clock, options.policy, options.timeout_s, point)
    timing = timing_at(variant, point)
    if ready.boundary_s is not None and timing is not None:  # outside harness_overhead_s: a correctness test's work
        timing["pre_timing_check_s"] = round(ready.boundary_s, 4)
    interleaved = interleave_with_baseline(variant, ready.baseline, TIMING_REPLY_CHECK, options.interleave_rounds,
                                           options.policy, options.timeout_s, point)
    if interleaved is not None:
        benchmark.extra_info["speedup_vs_baseline"] = round(interleaved["speedup"], 4)
    session.config.hook.pytest_dcuopt_branch_timed(variant=variant, config=session.config, samples=samples)
    if session.gate is not None:
        gate_timing(session, variant, point)


def baseline_for(session: SessionView, variant: Variant) -> tuple[Variant | None, bool]:
    """The case's baseline for the interleaved A/B, and whether its default dims are to be checked here
    (`ready_to_time` checks them once): the one this process ran, or (an xdist worker, where the baseline's tests
    ran on another worker) one built here from the build cache, so the pair is measured under the lock as in a
    serial run. Only for a baseline this run selected; None when there is none, or it does not build or run here
    (its own tests say why)."""
    key = (variant.case.name, variant.toolchain.name, "baseline")
    baseline = session.variants.get(key)
    verified_here = baseline is not None and baseline.verdicts.default_verified
    if verified_here or variant.branch.is_baseline or xdist_worker_id() is None:
        return baseline, False
    root, toolchain = variant.case.root, variant.toolchain.name
    if (session.options.interleave_rounds <= 0 or (root, toolchain, "baseline") not in session.selected
            or key in session.baselines_tried):
        return None, False
    session.baselines_tried.add(key)  # checked once per process: a baseline wrong here is not tried again
    baseline = baseline or session.branch_variant(root, toolchain, "baseline")  # not pre-built here: build-jobs 0
    if baseline is None:
        return None, False
    session.resolve(baseline)
    if baseline.setup_error is not None or baseline.worker is None:
        return None, False
    return baseline, True


def bench_point(variant: Variant, size: BenchSize | None) -> BenchPoint:
    """Where the benchmark times: the default dims, or the size's dims (a size whose dims cannot be timed fails
    its test, and its entry in the record says why)."""
    if size is None:
        return default_point(variant)
    try:
        return size_point(variant, size)
    except CaseError as exc:
        message = str(exc)
    variant.record.sizes[size.name]["error"] = {"kind": "case error", "message": message}
    pytest.fail(message, pytrace=False)


def gate_timing(session: SessionView, variant: Variant, point: BenchPoint | None = None) -> None:
    """--dcuopt-compare: the branch's timing verdict against the baseline (at a benchmark size: against the
    baseline run's figures at that size); SLOW fails the benchmark test."""
    gate = session.gate
    assert gate is not None
    point = point or default_point(variant)
    record = variant.record if point.size is None else variant.record.at_size(point.size)
    verdict = gate.judge_timing(record, variant.toolchain.identity(), lambda: remeasure(session, variant, point))
    session.add_report(GATE_REPORT, gate_entry(record, verdict))
    if verdict.fails:
        label = variant.label if point.size is None else f"{variant.label}[{point.size}]"
        pytest.fail(gate.slow_message(label, verdict), pytrace=False)


def remeasure(session: SessionView, variant: Variant, point: BenchPoint) -> list[float]:
    """The gate's retry of a SLOW verdict: the branch timed again at the point, in milliseconds."""
    try:
        spec = bind_spec(variant, point)
        samples = measure(variant, TIMING_REPLY_CHECK, session.options.policy, session.options.timeout_s,
                          spec)["samples"]
        return [s * 1e3 for s in samples.seconds]
    except TimedCallsWrong as exc:
        wrong = str(exc)
    pytest.fail(wrong, pytrace=False)


def with_regression(session: SessionView, variant: Variant, kind: str, failure: str) -> str:
    """The failure message, headed by the regression it is when the baseline (--dcuopt-compare) passed."""
    note = session.gate.regression_note(variant.record, kind) if session.gate is not None else None
    return f"{note}\n\n{failure}" if note else failure


def observer_test(session: SessionView, name: str, variant: Variant, item: pytest.Item) -> None:
    """`test_<observer>_<toolchain>[<branch>]`: the observer's `observe`, with the session as its RunContext."""
    observer = session.observers[name]
    if getattr(observer, "measures", True):  # a profile or an ablation: nothing compiles beside it
        session.quiet()
    try:
        observer.observe(session, variant, item)
        return
    except pytest.fail.Exception as exc:
        if name != "isa" or session.gate is None or not session.gate.regression_note(variant.record, "isa"):
            raise
        failure = str(exc.msg)
    pytest.fail(with_regression(session, variant, "isa", failure), pytrace=False)  # outside `except`: no chained trace
