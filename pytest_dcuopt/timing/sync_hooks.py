"""Timing a synchronizing `solve` through its library's sync hooks: the marked method (`sample_marked`, the primary
figure `kernels_marked`), used instead of `timing.sync`'s profiler method when the kernel library has sync
hooks (`SyncMarks`: the `cuda` toolchain force-includes them into every `.cu` build, see cuda_sync_hooks.h).
The profiler's records are exact about what ran, but with CUPTI recording, kernels themselves ran 7-9% slower on
an H200 (event pairs around the same calls agree; docs/gpu-timing.md has the figures), so no profiler runs here:
the harness queues a delay kernel, the library records S0 behind it, `solve` queues its kernels while the delay
runs, and the hook on its first blocking call (cudaDeviceSynchronize, cudaStreamSynchronize,
cudaEventSynchronize, a non-device-to-device cudaMemcpy, cudaFree) records E1 *before* the call waits. After
the wait, a spin kernel hides the host's next launches again (S1 ... E2, and so on). Each segment E_k - S_(k-1)
minus the event bracket's calibrated cost (`timing.offset`) is device time of the kernels (and device-side
copies) queued in it; a sample is the sum. A sample whose first wait came after the delay ended may have
started late: it is discarded and the delay doubled, as the asynchronous method does. The profiler's figures
(`kernels`, `kernels_only`, `device_span`) stay available as side figures (--dcuopt-side-figures).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from .bracket import Hiding
from .device_timer import DeviceTimer
from .policy import TimingPolicy, should_stop
from .sync import SyncSampled

MARK_LEAD_MIN_S = 200e-6  # the delay queued before S0: covers the host's launches inside the call
MARK_LEAD_MAX_S = 5e-3
EMPTY_SEGMENT_FACTOR = 1.5  # a segment after a wait no longer than this x the bracket cost queued no work


@dataclass
class MarkedCall:
    """What a library's sync hooks recorded for one call."""

    segments_s: list[float]  # E_k - S_(k-1), raw event times
    waits: int  # blocking calls the hooks saw
    first_wait_host_s: float  # host time from S0's record to the first blocking call (-1: none)


class SyncMarks(Protocol):
    """A kernel library's sync hooks (cuda_shim.cu's dcuopt_sync_*)."""

    def begin(self, lead_cycles: int) -> bool: ...

    def end(self) -> None: ...

    def read(self) -> MarkedCall | None: ...



def sample_marked(launch: Callable[[], Any], marks: SyncMarks, device_timer: DeviceTimer, policy: TimingPolicy,
                  hiding: Hiding, clock: Callable[[], float], flush: bool,
                  bracket_s: Callable[[list[float]], float]) -> SyncSampled | str:
    """One call per sample behind a delay kernel, timed by the library's sync hooks (see the module docstring);
    `bracket_s(raw first segments)` gives the event bracket's cost to subtract (asked once, from the first kept
    samples). A string says why the hooks cannot be used (they saw no wait: a call that waits through a path they do
    not cover)."""
    lead = MARK_LEAD_MIN_S
    kept: list[MarkedCall] = []
    figures: dict[str, list[float]] = {"kernels_marked": [], "host_call": [], "host_wall": []}
    bracket: float | None = None
    late = 0
    sampled_s = 0.0
    start = clock()
    while True:
        taken = _marked_sample(launch, marks, device_timer, hiding, clock, flush, lead)
        if isinstance(taken, str):
            return taken
        call, host_call, host_wall, sample_s = taken
        sampled_s += sample_s
        if call.first_wait_host_s > lead:  # its launches may have come after the delay ended
            late += 1
            lead = min(MARK_LEAD_MAX_S, 2 * lead)
        else:
            kept.append(call)
            figures["host_call"].append(host_call)
            figures["host_wall"].append(host_wall)
        if not kept:
            if late >= 8:
                return (f"every sample was late: the call reached its first wait more than {lead * 1e6:.0f} us "
                        "after it started (host work before the kernels), so its launches could not be hidden")
            continue
        if bracket is None:
            if len(kept) < 3 and sampled_s < policy.max_time_s:
                continue
            bracket = bracket_s([c.segments_s[0] for c in kept])
            figures["kernels_marked"] = [marked_seconds(c.segments_s, bracket) for c in kept]
        elif kept[-1] is call:
            figures["kernels_marked"].append(marked_seconds(call.segments_s, bracket))
        reason = should_stop(figures["kernels_marked"], sampled_s, policy)
        if reason is None and clock() - start >= 2 * policy.max_time_s + 1.0:
            reason = f"time cap ({policy.max_time_s:g} s of sampling)"
        if reason:
            if late:
                reason += f"; {late} late samples discarded (delay raised to {lead * 1e6:.0f} us)"
            return SyncSampled(figures, "kernels_marked", reason, activity_names=[
                f"{len(kept[0].segments_s)} event segments per call, {sorted({c.waits for c in kept})} hooked "
                f"waits; bracket cost {bracket * 1e6:.2f} us subtracted per segment"])


def _marked_sample(launch: Callable[[], Any], marks: SyncMarks, device_timer: DeviceTimer, hiding: Hiding,
                   clock: Callable[[], float], flush: bool,
                   lead: float) -> tuple[MarkedCall, float, float, float] | str:
    """One call armed by the hooks: (what they recorded, host call time, host wall time, the sample's host time),
    or why the hooks cannot time it."""
    queued = clock()
    if flush:
        device_timer.flush()
    device_timer.sleep(hiding.cycles(lead))
    if not marks.begin(hiding.cycles(lead)):
        return "the library's sync hooks could not create their events"
    begin = clock()
    launch()
    returned = clock()
    marks.end()
    call = marks.read()
    device_timer.synchronize()
    done = clock()
    if call is None or not call.segments_s:
        return "the library's sync hooks recorded no events for the call"
    if call.waits == 0:
        return ("the call waited for the device, but not through a call the sync hooks cover "
                "(cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventSynchronize, cudaMemcpy, cudaFree)")
    return call, returned - begin, done - begin, done - queued


def marked_seconds(segments_s: Sequence[float], bracket_s: float) -> float:
    """One call's kernel time from its segments: the first always counts; a later one only when it is longer than
    an empty bracket (a solve that returns right after its last wait leaves an empty last segment)."""
    total = 0.0
    for index, segment in enumerate(segments_s):
        if index and segment <= EMPTY_SEGMENT_FACTOR * bracket_s:
            continue
        total += max(0.0, segment - bracket_s)
    return total
