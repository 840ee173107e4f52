"""The worker's work on its loaded kernel: loading it, its bound buffers, and the `run`, `batch`, `snap` and `time`
requests; around the timed calls, the checked calls whose snapshots the pytest process compares with the reference
(`protocol.CheckPlan`)."""
from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

from ..timing.calibration import CalibratedRuntime
from .protocol import (
    BatchRequest,
    CheckedCall,
    CheckPlan,
    LoadRequest,
    LoadResult,
    RunRequest,
    TimeRequest,
    TimeResult,
)

if TYPE_CHECKING:
    from ..toolchains.base import Binding, LoadedKernel, Runtime
    from ..toolchains.binding import BindSpec, Snapshot

KEPT_BINDINGS = 2


class WorkerState:
    def __init__(self, containment: dict[str, Any] | None = None) -> None:
        self.containment = containment or {}  # what `containment.contain_worker` applied to this process
        self.kernel: LoadedKernel | None = None
        self.runtime: Runtime | None = None
        self.bindings: dict[tuple[Any, ...], Binding] = {}
        self.seeds: dict[tuple[Any, ...], int] = {}  # the seed each binding's inputs were last set from

    def load(self, request: LoadRequest) -> LoadResult:
        from ..toolchains import make_toolchain

        toolchain = make_toolchain(request["toolchain"], request.get("arch"), request.get("flags", ()))
        self.runtime = toolchain.runtime()
        self.kernel = toolchain.load(request["artifact"], request["params"])
        return {"pid": os.getpid(), "device": {**self.runtime.describe(), "containment": self.containment}}

    def binding(self, spec: BindSpec) -> Binding:
        """The buffers at `spec.dims`: bound once per dims; another seed at the same dims writes its inputs into the
        same buffers (a kernel that keeps results per pointer and size sees new inputs on the same pointers)."""
        assert self.kernel is not None and self.runtime is not None, "the kernel is loaded first"
        key = (tuple(sorted(spec.dims.items())), tuple(sorted(spec.domains.items())))  # domains: input sets
        if key in self.bindings:
            self.bindings[key] = found = self.bindings.pop(key)  # the most recently used last
            if self.seeds.get(key) != spec.seed:
                rebind = getattr(found, "rebind", None)
                if callable(rebind):
                    rebind(spec)
                else:
                    self.bindings[key] = self.kernel.bind(spec, self.runtime)
                self.seeds[key] = spec.seed
            return self.bindings[key]
        # Two sets of buffers stay alive: the default dims' (costly to draw at real sizes) survive the small
        # correctness examples in between. Sizes may be large: when binding fails, it is tried once more alone.
        while len(self.bindings) >= KEPT_BINDINGS:
            del self.bindings[self._evicted()]
        try:
            self.bindings[key] = self.kernel.bind(spec, self.runtime)
        except Exception:
            if not self.bindings:
                raise
            self.bindings.clear()
            self.bindings[key] = self.kernel.bind(spec, self.runtime)
        self.seeds[key] = spec.seed
        return self.bindings[key]

    def _evicted(self) -> tuple[Any, ...]:
        """The binding to drop: the least recently used one, but never the largest (the default dims' buffers, which
        take seconds to draw at real sizes, outlive the small boundary and Hypothesis examples in between)."""
        largest = max(self.bindings, key=lambda key: self.bindings[key].nbytes)
        return next((key for key in self.bindings if key != largest), largest)

    def run(self, request: RunRequest) -> Snapshot:
        binding = self.binding(request["spec"])
        binding.reset()
        binding.launch()
        return binding.snapshot()

    def batch(self, request: BatchRequest) -> dict[str, int]:
        """Back-to-back calls on the bound buffers, read with the clock like timed calls; the pytest process times
        the request itself (timing/bounds.py)."""
        binding = self.binding(request["spec"])
        assert self.runtime is not None
        clock = time.perf_counter_ns
        rotate = request.get("rotate")
        sizes: dict[str, int] = dict(getattr(binding, "input_sizes", None) or {})
        prepare = getattr(binding, "prepare_call", None) if rotate is not None and sizes else None
        from ..toolchains.binding import roll_offsets  # numpy: not in the supervisor, which imports this module

        for call in range(int(request["calls"])):
            if prepare is not None and rotate is not None:
                prepare(roll_offsets(sizes, rotate, call))  # other inputs for every call, as timed calls get
            begin = clock()
            binding.launch()
            clock() - begin
        self.runtime.synchronize()
        return {"calls": int(request["calls"])}

    def snap(self, request: BatchRequest) -> dict[str, int]:
        """Back-to-back calls on the bound buffers, each followed by its snapshot (kept by nobody): the pytest process
        times the request and compares it with a batch of calls alone (timing/bounds.py `snapshot_problem`)."""
        binding = self.binding(request["spec"])
        for _ in range(int(request["calls"])):
            binding.launch()
            binding.snapshot()
        return {"calls": int(request["calls"])}

    def time(self, request: TimeRequest) -> TimeResult:
        """Time the kernel; hand back the outputs of the calls the request's plan names (`protocol.CheckPlan`).

        Every call is prepared the same way: the outputs hold finite junk before the first call (not the NaN
        poison), and before each call every input is rotated in its buffer (`TimedCalls`), so a result kept from an
        earlier call is wrong for the next one. Calls the plan numbers are snapshotted after they return, outside
        the timed window; around the timed calls come the announced checked calls (before the first, on new input
        values right after the last, after the last per input set). The pytest process computes the inputs of every
        one itself and compares the outputs with the reference (bench/run.py).
        """
        started = time.perf_counter()
        binding = self.binding(request["spec"])
        assert self.kernel is not None and self.runtime is not None
        plan = request["plan"]
        ready = time.perf_counter()
        # protocol.TimeRequest types `calibration` as plain JSON; the runtime checks it (None from the first worker).
        offered = cast(Mapping[str, Any], request).get("calibration")
        calibrated = isinstance(self.runtime, CalibratedRuntime)
        if offered is not None and calibrated:
            cast(CalibratedRuntime, self.runtime).accept_calibration(offered)
        # Device runtimes rotate over extra input sets when one set would sit in the cache; only the hot-rotated
        # side figure uses them, so without side figures no extra sets are allocated.
        spec, working_set, policy = request["spec"], binding.nbytes, request["policy"]
        sets = self.runtime.rotation_sets(working_set) if policy.side_figures else 1
        others = [self.kernel.bind(replace(spec, seed=spec.seed + index, provided={}), self.runtime)
                  for index in range(1, sets)]
        checks: list[CheckedCall] = []
        if plan.announced:
            checks.append(_call_on_start(binding, "the call before the first timed call", ("start",), plan.seed,
                                        plan.poisoned_start))
        else:  # prepared as for that call: starting inputs, junk (or the poison) in the outputs
            _prepare_start(binding, plan.seed, plan.poisoned_start)
        timed = TimedCalls(binding, plan)
        measured = time.perf_counter()
        samples = self.runtime.measure_sets([timed, *(other.launch for other in others)], policy, working_set)
        measure_wall_s = time.perf_counter() - measured
        checking = time.perf_counter()
        checks += timed.checks
        if plan.announced:
            checks += new_inputs_call(binding, plan.new_inputs_seed)
            for index, bound in enumerate([binding, *others]):
                checks.append(_call_on_start(bound, f"the call after the last timed call (input set {index})",
                                            ("set", index), plan.seed + index + 1))
        del others
        ended = time.perf_counter()
        # Where the worker's time went besides the samples (the record's `timing.harness_phases_s`).
        phases = {"bind": ready - started, "checked_calls": (measured - ready) + (ended - checking)}
        result: TimeResult = {"samples": samples, "device": self.runtime.describe(), "measure_wall_s": measure_wall_s,
                              "checks": checks, "timed_calls": timed.calls, "sets": sets,
                              "worker_wall_s": ended - started, "worker_phases_s": phases}
        # For the next worker on this device (run/isolation.py keeps it), as the protocol's plain JSON.
        cast(dict[str, Any], result)["calibration"] = (cast(CalibratedRuntime, self.runtime).calibration()
                                                       if calibrated else None)
        return result


class TimedCalls:
    """The launch a runtime times, with what happens between two timed calls, outside the timed window: `prepare`
    rotates every input (`binding.roll_offsets` from the plan's seed and the call's number), `finish` snapshots the
    calls the plan names. A runtime that times on the host calls both around every call (timing/host.py); one that
    does not (device event timing) times `__call__` alone: then the inputs stay put and only the announced calls
    are checked."""

    def __init__(self, binding: Any, plan: CheckPlan) -> None:
        self.binding = binding
        self.plan = plan
        self.calls = 0
        self.checks: list[CheckedCall] = []
        sizes = getattr(binding, "input_sizes", None)
        self._sizes: dict[str, int] | None = dict(sizes) if sizes is not None and callable(
            getattr(binding, "prepare_call", None)) else None
        from ..toolchains.binding import roll_offsets  # numpy: not in the supervisor, which imports this module

        self._offsets = roll_offsets

    def __call__(self) -> None:
        self.binding.launch()

    def prepare(self) -> None:
        if self._sizes is not None:
            self.binding.prepare_call(self._offsets(self._sizes, self.plan.seed, self.calls))

    def finish(self) -> None:
        call = self.calls
        self.calls += 1
        if self.plan.every_call or call in self.plan.checked:
            # The next call's inputs go in first: a call's outputs are what it left, whatever the inputs hold now. A
            # worker whose snapshot computes the outputs when they are read (replaced through the CPython C API or
            # by monkey-patching) computes them from other inputs, and the call is wrong. Not where an in/out buffer
            # is rotated too: that would overwrite the very output being checked.
            if not getattr(self.binding, "rotates_outputs", False):
                self.prepare()
            self.checks.append({"call": f"timed call {call} (counted from the first warm-up call)",
                                "inputs": ("timed", call), "snapshot": self.binding.snapshot(), "setup": TIMED})


JUNK_OUTPUTS = ("Before that call its outputs held finite junk, as after an earlier call, not the NaN poison: a kernel "
                "that skips work when its output already holds a value, or that changes behaviour after many calls, "
                "fails here.")
POISONED_OUTPUTS = ("Before that call its outputs held the NaN poison, as before a correctness call, and the timed "
                    "calls after it found the previous call's result there: a kernel that computes only in a run of "
                    "calls that starts from junk fails here.")
TIMED = ("That call was one of the timed calls, prepared like every other (each call's inputs rotated in their "
         "buffers, the outputs holding the previous call's result), chosen at random from the run's secret seed: a "
         "kernel that computes only when it is checked, or hands back a result kept from earlier inputs, fails here.")
NEW_INPUTS = ("That call ran right after the timed calls, on the same buffers, with the outputs still holding the last "
              "timed call's result, but with new input values: a kernel that hands back a result kept from an "
              "earlier call (memoized on its pointers, or skipped because the output still holds what it wrote) "
              "fails here.")


def _prepare_start(binding: Any, seed: int, poisoned: bool = False) -> None:
    """The starting inputs, and junk (finite, earlier-result-like) outputs, or the NaN poison with `poisoned`."""
    if poisoned:
        binding.reset()
        return
    getattr(binding, "reset_inputs", binding.reset)()  # the outputs get junk next: poisoning them first is wasted
    scramble = getattr(binding, "scramble_outputs", None)
    if callable(scramble):
        scramble(seed)


def _call_on_start(binding: Any, label: str, inputs: tuple[Any, ...], seed: int,
                  poisoned: bool = False) -> CheckedCall:
    """One call on the starting inputs with junk outputs (the poison with `poisoned`); its snapshot for the check."""
    _prepare_start(binding, seed, poisoned)
    binding.launch()
    return {"call": label, "inputs": inputs, "snapshot": binding.snapshot(),
            "setup": POISONED_OUTPUTS if poisoned else JUNK_OUTPUTS}


def new_inputs_call(binding: Any, seed: int) -> list[CheckedCall]:
    """The call after the last timed call, on new input values in the same buffers (see `redraw_inputs`); []
    for a binding that cannot redraw its inputs in place."""
    if not callable(getattr(binding, "redraw_inputs", None)):
        return []
    try:
        binding.redraw_inputs(seed)
        binding.launch()
        snapshot = binding.snapshot()
    finally:
        binding.restore_inputs()
    return [{"call": "the call after the last timed call, on new input values in the same buffers",
             "inputs": ("new",), "snapshot": snapshot, "setup": NEW_INPUTS}]
