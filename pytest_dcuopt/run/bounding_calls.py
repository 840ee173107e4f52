"""The calls the pytest process times itself, after a worker's `time` reply, to bound the timing it reported
(`isolation.IsolatedKernel` makes them with every other worker stopped; `timing/bounds.py` holds the rules that judge
them): a batch of back-to-back calls until the worker's threads sleep, the same on unchanged and on rotated inputs,
calls each followed by its snapshot, and one call with how long the worker's threads ran on after it."""
from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from ..case.buffers import numel, storage_dtype
from ..case.cabi import Param
from ..timing.bounds import (
    BATCH_ATTEMPTS,
    QUIET_LIMIT_S,
    REPEAT_SUSPECT,
    REPEAT_TARGET_S,
    SNAPSHOT_TRIES,
    batch_calls,
    batch_problem,
    clock_kind,
    host_wall_s,
    repeat_problem,
    running_after_problem,
    snapshot_calls,
    snapshot_problem,
)
from ..timing.policy import Samples
from .processes import running_threads

# A request to the worker and its reply: (message, timeout in seconds, what is being done, for messages) -> result.
Exchange = Callable[[dict[str, Any], float, str], Any]


class BoundingCalls:
    """The bounding calls of one kernel's worker: `exchange` sends it a request, `mine` lists its processes (the
    worker and every process below its supervisor); `params` and `toolchain` are the kernel's."""

    def __init__(self, params: Sequence[Param], toolchain: str, exchange: Exchange,
                 mine: Callable[[], list[int]]) -> None:
        self.params = params
        self.toolchain = toolchain
        self.exchange = exchange
        self.mine = mine
        self._primed: dict[int, float] = {}  # id of a spec bound by an untimed call -> the ping's round trip then

    def refute(self, spec: Any, samples: Samples, timeout_s: float, bounds: dict[str, Any]) -> str | None:
        """Time back-to-back calls from here until the worker's threads sleep; why they refute the samples' mean, or
        None."""
        mean = statistics.fmean(samples.seconds)
        calls = batch_calls(mean)
        best, problem, attempts = float("inf"), None, 0
        while attempts < BATCH_ATTEMPTS:
            attempts += 1
            per_call = self._timed_batch(spec, calls, timeout_s)
            if per_call is None:
                problem = self._still_running(calls)
                break
            best = min(best, per_call)
            problem = batch_problem(mean, best, calls, samples.timer, host_wall_s(samples.extra))
            if problem is None:
                break
        bounds.update(batch_calls=calls, batch_attempts=attempts, batch_per_call_s=significant_s(best),
                      mean_s=significant_s(mean))
        if problem is None:
            problem = self._repeat_bound(spec, samples, best, calls, timeout_s, bounds)
        if problem is None:
            problem = self._snapshot_bound(spec, samples, best, timeout_s, bounds)
        if problem is None:
            problem = self._single_call_bound(spec, mean, timeout_s, bounds)
        return problem

    def _snapshot_bound(self, spec: Any, samples: Samples, per_call: float, timeout_s: float,
                        bounds: dict[str, Any]) -> str | None:
        """Back-to-back calls each followed by its snapshot, timed from here like the batch of calls alone, against
        that batch's time per call (timing/bounds.py `snapshot_problem`): many calls, so that a descheduled thread in
        one of them does not count. Made again, up to SNAPSHOT_TRIES in all, while over the bound (the cheapest
        counts)."""
        if per_call == float("inf"):
            return None
        cheapest, problem = float("inf"), None
        for _ in range(SNAPSHOT_TRIES):
            calls = snapshot_calls(max(per_call, min(samples.seconds)), self._working_set(spec))
            snapped = self._timed_batch(spec, calls, timeout_s, op="snap")
            if snapped is None:
                return self._still_running(calls)
            cheapest = min(cheapest, snapped)
            problem = snapshot_problem(min(samples.seconds), max(0.0, cheapest - per_call), self._working_set(spec),
                                       snapshot_kind(self.toolchain, samples.timer))
            if problem is None:
                break
        bounds["snapshot_s"] = significant_s(max(0.0, cheapest - per_call))
        return problem

    def _timed_batch(self, spec: Any, calls: int, timeout_s: float, rotate: int | None = None,
                     op: str = "batch") -> float | None:
        """Seconds per call of `calls` back-to-back calls (`rotate`: a seed, every call's inputs rotated first; `op`
        "snap": each followed by its snapshot), from this process's request until the worker's threads sleep again
        (less a ping's round trip); None when they did not sleep within QUIET_LIMIT_S."""
        round_trip = self._primed_for(spec, timeout_s)
        asked = time.perf_counter()
        message = {"op": op, "spec": spec, "calls": calls, **({"rotate": rotate} if op == "batch" else {})}
        self.exchange(message, timeout_s, "the bounding batch")
        ended, quiet = self._quiet_after()
        return max(0.0, ended - asked - round_trip) / calls if quiet else None

    def _primed_for(self, spec: Any, timeout_s: float) -> float:
        """The ping's round trip, after one untimed call on the spec, made once for every batch on it: binding the
        spec (buffers allocated, inputs drawn and uploaded: hundreds of ms at GPU sizes) is not a call's cost, and
        every batch ends with the worker's threads asleep, so the next one starts as the first did."""
        primed = self._primed.get(id(spec))
        if primed is None:
            self.exchange({"op": "batch", "spec": spec, "calls": 1}, timeout_s, "the bounding batch's first call")
            self._quiet_after()
            primed = self._primed[id(spec)] = min(self._round_trip(timeout_s) for _ in range(3))
        return primed

    @staticmethod
    def _still_running(calls: int) -> str:
        return (f"the worker's threads were still running {QUIET_LIMIT_S:g} s after its {calls} back-to-back calls "
                "returned: work left to a thread or process after solve returned is not timed. Make solve wait for "
                "all of its work before it returns")

    def _repeat_bound(self, spec: Any, samples: Samples, per_call: float, calls: int, timeout_s: float,
                      bounds: dict[str, Any]) -> str | None:
        """The batch as a lower bound (timing/bounds.py `repeat_problem`): its calls repeat the inputs of the call
        before them. A batch much faster than the fastest timed call is compared with a batch whose every call gets
        other inputs (rotated, as timed calls are), both hot and back to back: cold samples can be far slower than
        hot calls for reasons of their own (an OpenMP pool woken after the flush). The batch on unchanged inputs is
        made again first, sized by its own time per call (its first call ran on other inputs than the calls before
        it, and may do the work the others skip)."""
        fastest = min(samples.seconds)
        if per_call == float("inf") or per_call * REPEAT_SUSPECT >= fastest:
            return None
        calls = batch_calls(per_call, REPEAT_TARGET_S)
        again = self._timed_batch(spec, calls, timeout_s)
        rotated_calls = batch_calls(fastest, REPEAT_TARGET_S)
        rotated = self._timed_batch(spec, rotated_calls, timeout_s, rotate=plan_seed_of(spec))
        if again is None or rotated is None:
            return self._still_running(calls)
        bounds.update(repeat_calls=calls, repeat_per_call_s=significant_s(again),
                      rotated_calls=rotated_calls, rotated_per_call_s=significant_s(rotated))
        return repeat_problem(rotated, min(per_call, again), calls, self._working_set(spec))

    def _working_set(self, spec: Any) -> int:
        """Bytes of the pointer buffers of one call at the spec's shapes (0 when the spec has none)."""
        shapes = getattr(spec, "shapes", {}) or {}
        total = 0
        for param in self.params:
            if param.pointer and param.name in shapes:
                total += numel(shapes[param.name]) * storage_dtype(param.dtype).itemsize
        return total

    def _single_call_bound(self, spec: Any, mean: float, timeout_s: float, bounds: dict[str, Any]) -> str | None:
        """One call, then how long the worker's threads kept running after it returned (timing/bounds.py); made
        again, up to BATCH_ATTEMPTS in all, while over the bound (the shortest counts): on a loaded machine an OpenMP
        pool's spin after a region is stretched by the threads being descheduled, while work left to a thread is
        there after every call."""
        shortest, problem = float("inf"), None
        for _ in range(BATCH_ATTEMPTS):
            self.exchange({"op": "batch", "spec": spec, "calls": 1}, timeout_s, "a single call")
            replied = time.perf_counter()
            ended, quiet = self._quiet_after()
            shortest = min(shortest, ended - replied if quiet else QUIET_LIMIT_S)
            problem = running_after_problem(shortest, mean)
            if problem is None:
                break
        bounds["running_after_call_s"] = significant_s(shortest)
        return problem

    def _round_trip(self, timeout_s: float) -> float:
        began = time.perf_counter()
        self.exchange({"op": "ping"}, timeout_s, "ping")
        return time.perf_counter() - began

    def _quiet_after(self, poll_s: float = 0.0005) -> tuple[float, bool]:
        """When the worker's threads were first seen all asleep twice in a row (after a reply), and whether they
        were within QUIET_LIMIT_S."""
        began = time.perf_counter()
        first_quiet: float | None = None
        while time.perf_counter() - began < QUIET_LIMIT_S:
            now = time.perf_counter()
            if running_threads(self.mine()) == 0:
                if first_quiet is not None:
                    return first_quiet, True
                first_quiet = now
            else:
                first_quiet = None
            time.sleep(poll_s)
        return time.perf_counter(), False


def snapshot_kind(toolchain: str, timer: str) -> str:
    """Whose snapshot cost the snapshot bound allows for (timing/bounds.py SNAPSHOT_SLACK_S)."""
    if toolchain == "python":
        return "python"
    return "device" if clock_kind(timer) == "device" else "c"


def plan_seed_of(spec: Any) -> int:
    """A rotation seed for the batch whose calls get other inputs: this process's, from the run's secret seed."""
    from ..toolchains.exchange import plan_seed  # numpy and xxhash: not at this module's import

    return plan_seed("rotated batch", getattr(spec, "dims", {}))


def significant_s(value: float) -> float | None:
    return float(f"{value:.4g}") if value != float("inf") else None
