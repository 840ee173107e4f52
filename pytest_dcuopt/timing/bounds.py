"""Bounds on what a worker reports about its own timing, from what the pytest process measures itself.

The worker reads the clock in the same process as the kernel, so a kernel can slow the clock, rewrite its samples,
or hand its work to a thread that finishes after `solve` returned. The pytest process therefore times a batch of
back-to-back calls itself (`run/bounding_calls.py`), from the moment it asks to the moment every thread of the worker is
asleep again, and compares the time per call with the mean of the samples the worker reported (the mean, not the
median: a batch's time per call is a mean, and an OpenMP solve on a busy machine has a long tail that a median
leaves out):

- `BATCH_FACTOR`, `BATCH_SLACK_S`: a branch whose batch took more than FACTOR x its reported mean + SLACK per call
  is refused. An honest kernel's batch call costs its mean or less (the batch runs hot and does not flush caches;
  the samples already include the call's own overhead on the host clock), but on a busy machine a multi-threaded
  call waits for a descheduled thread now and then, and the mean of such a heavy tail moves a lot between two
  stretches of calls: torch's two-thread multiply averaged 1.09 ms in its samples and 3.89 ms in the batch right
  after, honestly (hence 6x). The slack covers a device kernel's launch
  overhead, which device events leave out, and the threads of an OpenMP pool that spin briefly after a region.
  Decided from fixed samples in tests/unit/timing/test_bounds.py.
- a device-timed solve that waits for the device or allocates (the sync method) spends host time that its events
  leave out (cudaMalloc, cudaFree, the wait itself: an honest temporary-buffer solve of 9.8 us device time took 116 us
  per call back to back on an H200), so its bound starts from its host wall time per call when that is larger than
  its mean (`host_wall_s`, the worker's own figure: a forged one shows in the record beside the device time).
- `RUNNING_AFTER_S`, `RUNNING_AFTER_FACTOR`: after one more single call, the worker's threads may run on for at most
  that long + FACTOR x the mean (an OpenMP pool spins a little after a region, then sleeps); longer is work left to
  a thread after solve returned.
- the samples cannot add up to more than the request's wall time (`samples_exceed_wall`).
- `SNAPSHOT_FACTOR`, `SNAPSHOT_MIN_BANDWIDTH`, `SNAPSHOT_SLACK_S`: back-to-back calls each followed by its snapshot
  (the outputs copied), timed by the pytest process, may cost more per call than the batch of calls alone by what
  reading the buffers costs, not by the work. A kernel whose worker computes the outputs while they are read (a
  snapshot function replaced from C++ or Python) hides its work there; refused when a snapshot costs more than
  FACTOR x the fastest sample + twice the working set at MIN_BANDWIDTH + SLACK (10 ms for the python toolchain, whose
  snapshot of an honest branch cost 1.3 ms a call, as much as a replaced one that computed the series: there the
  checked timed calls, snapshotted after the next call's inputs are in, are what catches it; 5 ms on a GPU, where a
  snapshot synchronizes and copies every buffer back). Many calls in one request, so that one descheduled thread
  does not count (a single call and snapshot of an honest two-thread kernel once took 2.9 ms more than a single
  call), but at most `SNAPSHOT_MAX_BYTES` read back (`snapshot_calls`). Every batch starts with one untimed call: the
  first request with a spec binds it (buffers allocated and filled), which is no call's cost.
- `LEFTOVER_WATCH_S`, `LEFTOVER_CPU_S`: processes a kernel started and left running after its calls returned are
  ended before every timing, after being watched for WATCH_S while no call runs; when they used more CPU time than
  this meanwhile, they were working outside the timed window (or loading the machine for the branches timed beside
  it), and the timing is refused. Idle helpers (a process pool waiting for work) are ended without a refusal.
- `REPEAT_SUSPECT`, `REPEAT_FACTOR`, `REPEAT_MIN_S`, `REPEAT_MIN_BANDWIDTH`: the batch is also a lower bound. Its
  calls run on the inputs of the call before them, while every timed call's inputs change. A batch more than SUSPECT
  times faster than the fastest sample is compared with a batch whose every call gets other inputs (rotated, as timed
  calls are), both hot and back to back (cold samples can be far slower than hot calls for reasons of their own: an
  OpenMP pool woken after the cache flush took 44x its hot call on a busy machine). An honest kernel costs the same on
  both, plus the rotation; a kernel that keeps results by input content, or skips work when its inputs and outputs
  look unchanged, is tens of times faster on unchanged inputs. Refused when it is more than FACTOR times faster and
  by more than MIN_S or the time to move the whole working set at MIN_BANDWIDTH (which bounds the rotation's cost).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

BATCH_TARGET_S = 0.05  # how long the batch should take at the reported mean
BATCH_MAX_CALLS = 200_000
BATCH_FACTOR = 6.0
BATCH_SLACK_S = {"host": 10e-6, "device": 50e-6}
BATCH_ATTEMPTS = 3  # a batch over the bound is repeated (the best of them is judged): a busy machine stretches one
QUIET_LIMIT_S = 2.0  # how long the worker's threads may keep running after the batch's calls returned
WALL_SLACK_S = 1e-3
RUNNING_AFTER_S = 0.1  # an OpenMP pool spun up to 28 ms after a region on a busy 2-core machine
RUNNING_AFTER_FACTOR = 3.0
LEFTOVER_WATCH_S = 0.05
LEFTOVER_CPU_S = 0.02  # /proc counts in clock ticks (10 ms): one spinning process uses 50 ms in the watch
SNAPSHOT_FACTOR = 4.0
SNAPSHOT_MIN_BANDWIDTH = 1e9  # bytes per second the snapshot reads (every buffer and its guard) at the least
# A python binding's snapshot (torch to numpy) costs milliseconds; so does a GPU's (a synchronize, then each buffer
# and its guard copied back through the runtime: 1.8 ms a call for an honest Triton softmax's five buffers on an H200).
SNAPSHOT_SLACK_S = {"c": 1e-3, "python": 10e-3, "device": 5e-3}
SNAPSHOT_TRIES = 3  # a batch of snapshots over the bound is made again, up to this many in all; the cheapest counts
SNAPSHOT_TARGET_S = 0.02  # how long the batch of calls with their snapshots should take at the fastest sample
SNAPSHOT_MAX_BYTES = 1 << 30  # ... and at most this many bytes read back in all (at least SNAPSHOT_MIN_CALLS calls)
SNAPSHOT_MIN_CALLS = 3
REPEAT_FACTOR = 10.0
REPEAT_SUSPECT = 2.0  # a first batch this much faster than the median is repeated (its first call may do the work)
REPEAT_MIN_S = 200e-6
REPEAT_MIN_BANDWIDTH = 1e9  # bytes per second: far below any machine's memory, so a cold cache never explains it
REPEAT_TARGET_S = 0.02  # how long the repeated batch should take at the first batch's time per call


def batch_calls(mean_s: float, target_s: float = BATCH_TARGET_S) -> int:
    """How many back-to-back calls the bounding batch makes: about `target_s` at the mean, at least 2, or 1 where
    one call lasts `target_s` alone (an emulated Triton kernel's half second: a second call adds nothing to the
    bound but its time)."""
    if mean_s <= 0:
        return BATCH_MAX_CALLS
    if mean_s >= target_s:
        return 1
    return max(2, min(BATCH_MAX_CALLS, math.ceil(target_s / mean_s)))


def clock_kind(timer: str) -> str:
    """"host" for the host clock around each call, "device" for device events (they leave out launch overhead)."""
    return "host" if timer.startswith("host") else "device"


def batch_bound_s(mean_s: float, timer: str, host_s: float = 0.0) -> float:
    """The most a batch call may cost, per call, for a reported mean (and host time per call, device timers only)."""
    base = max(mean_s, host_s) if clock_kind(timer) == "device" else mean_s
    return BATCH_FACTOR * base + BATCH_SLACK_S[clock_kind(timer)]


def host_wall_s(extra: dict[str, Any]) -> float:
    """A sync-method sample's host wall time per call (timing.sync's `host_wall` median), 0 when not recorded."""
    figure = (extra.get("sync") or {}).get("host_wall") or {}
    median_ms = figure.get("median_ms") if isinstance(figure, dict) else None
    return float(median_ms) * 1e-3 if isinstance(median_ms, (int, float)) else 0.0


def batch_problem(mean_s: float, per_call_s: float, calls: int, timer: str, host_s: float = 0.0) -> str | None:
    """Why the batch refutes the reported mean, or None."""
    bound = batch_bound_s(mean_s, timer, host_s)
    if per_call_s <= bound:
        return None
    host = (f" and {host_s * 1e6:.3g} us of host time per call" if clock_kind(timer) == "device" and host_s > mean_s
            else "")
    return (f"the worker's samples average {mean_s * 1e6:.3g} us per call{host}, but {calls} back-to-back calls "
            "timed by the pytest process (until every thread of the worker slept again) took "
            f"{per_call_s * 1e6:.3g} us per call, "
            f"{per_call_s / mean_s:.1f}x that mean (the bound is {BATCH_FACTOR:g}x {'the larger' if host else ''} + "
            f"{BATCH_SLACK_S[clock_kind(timer)] * 1e6:g} us = {bound * 1e6:.3g} us). A kernel that slows or rewrites "
            "the worker's clock, or leaves its work to a thread that runs on after solve returns, looks like this. "
            "Make solve do all of its work before it returns, and leave the clock alone")


def samples_exceed_wall(samples_s: Sequence[float], wall_s: float) -> str | None:
    """Why the samples cannot be true: they add up to more than the request took, as the pytest process saw it."""
    total = float(sum(samples_s))
    if total <= wall_s + WALL_SLACK_S:
        return None
    return (f"the worker's {len(samples_s)} samples add up to {total:.4g} s, more than the {wall_s:.4g} s the whole "
            "timing request took as the pytest process measured it: the samples were not measured, they were written")


def running_after_problem(after_s: float, mean_s: float) -> str | None:
    """Why the worker's threads running `after_s` after a single call returned means work outside the timed window."""
    bound = RUNNING_AFTER_S + RUNNING_AFTER_FACTOR * mean_s
    if after_s <= bound:
        return None
    return (f"the worker's threads kept running {after_s * 1e3:.3g} ms after a single call returned (samples average "
            f"{mean_s * 1e3:.3g} ms; the bound is {RUNNING_AFTER_S * 1e3:g} ms + {RUNNING_AFTER_FACTOR:g}x that "
            "mean): work left to a thread or process after solve returned is not timed. Make solve wait for all of "
            "its work before it returns")


def repeat_problem(changing_s: float, per_call_s: float, calls: int, working_set_bytes: int) -> str | None:
    """Why back-to-back calls on unchanged inputs, at `per_call_s` each, refute calls whose inputs change every call
    (back to back as well), at `changing_s` each: the kernel reuses work across calls; or None."""
    margin = max(REPEAT_MIN_S, working_set_bytes / REPEAT_MIN_BANDWIDTH)
    if per_call_s * REPEAT_FACTOR >= changing_s or changing_s - per_call_s <= margin:
        return None
    return (f"{calls} back-to-back calls on unchanged inputs, timed by the pytest process, took "
            f"{per_call_s * 1e6:.3g} us per call, {changing_s / max(per_call_s, 1e-12):.0f}x faster than "
            f"back-to-back calls whose inputs change every call, as timed calls' do ({changing_s * 1e6:.3g} us; the "
            f"bound is {REPEAT_FACTOR:g}x, and {margin * 1e6:.3g} us: moving the inputs costs less). A kernel that "
            "keeps results by "
            "input content (a hash, sampled values, a file) or skips work when its inputs and outputs look unchanged "
            "looks like this. Compute the full result from the inputs on every call")


def leftover_problem(processes: int, cpu_s: float) -> str | None:
    """Why processes the kernel left running after its calls returned, which used `cpu_s` of CPU time in
    LEFTOVER_WATCH_S while no call ran, refute a timing."""
    if processes == 0 or cpu_s <= LEFTOVER_CPU_S:
        return None
    return (f"{processes} process{'es' if processes > 1 else ''} the kernel started kept working after its calls "
            f"returned: {cpu_s * 1e3:.3g} ms of CPU time in {LEFTOVER_WATCH_S * 1e3:g} ms while no call ran (the "
            f"bound is {LEFTOVER_CPU_S * 1e3:g} ms): work outside the timed window, or load left to slow the branches "
            "timed beside it. They were ended. A kernel may start processes only if it waits for them before solve "
            "returns")


def snapshot_calls(fastest_s: float, working_set_bytes: int) -> int:
    """How many calls with their snapshots the snapshot bound times: SNAPSHOT_TARGET_S at the fastest sample, but no
    more than SNAPSHOT_MAX_BYTES read back (a GPU kernel on 128 MB buffers would read back gigabytes: its few calls
    are long enough that one descheduled thread does not count)."""
    calls = batch_calls(fastest_s, SNAPSHOT_TARGET_S)
    if working_set_bytes > 0:
        calls = min(calls, max(SNAPSHOT_MIN_CALLS, SNAPSHOT_MAX_BYTES // working_set_bytes))
    return calls


def snapshot_bound_s(fastest_s: float, working_set_bytes: int, binding: str = "c") -> float:
    return (SNAPSHOT_FACTOR * fastest_s + 2 * working_set_bytes / SNAPSHOT_MIN_BANDWIDTH
            + SNAPSHOT_SLACK_S.get(binding, SNAPSHOT_SLACK_S["c"]))


def snapshot_problem(fastest_s: float, snapshot_s: float, working_set_bytes: int, binding: str = "c") -> str | None:
    """Why a snapshot that cost `snapshot_s` (a call with its snapshot, less a call, both timed by the pytest process)
    refutes samples whose fastest took `fastest_s`: the outputs were computed while they were read; or None.
    `binding`: "python" for the python toolchain's, "device" for a GPU's (their snapshot's own cost is milliseconds),
    else "c"."""
    slack = SNAPSHOT_SLACK_S.get(binding, SNAPSHOT_SLACK_S["c"])
    bound = snapshot_bound_s(fastest_s, working_set_bytes, binding)
    if snapshot_s <= bound:
        return None
    return (f"reading a call's outputs back took {snapshot_s * 1e3:.3g} ms more per call than the call itself "
            "(back-to-back calls timed by the pytest process), while the fastest timed call took "
            f"{fastest_s * 1e3:.3g} ms (the bound is "
            f"{SNAPSHOT_FACTOR:g}x that + the working set read twice at {SNAPSHOT_MIN_BANDWIDTH / 1e9:g} GB/s + "
            f"{slack * 1e3:g} ms = {bound * 1e3:.3g} ms): the work happens when the outputs are read, "
            "outside the timed window. A kernel that replaces the worker's snapshot (through the CPython C API or by "
            "monkey-patching) looks like this. Compute the outputs in solve")
