"""The messages between the pytest process (`isolation.IsolatedKernel`) and a kernel's worker (`worker.py`).

Each request is a pickled dict with an `op`; each reply is `{"ok": True, "result": ...}` or
`{"ok": False, "error": ..., "traceback": ...}`. The shapes are declared here once, so both sides and
the type checker agree on them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypedDict

if TYPE_CHECKING:
    from typing_extensions import NotRequired  # typing has it from 3.11; annotations are strings here

    from ..case.cabi import Param
    from ..timing.policy import Samples, TimingPolicy
    from ..toolchains.base import Artifact
    from ..toolchains.binding import BindSpec, Snapshot


@dataclass(frozen=True)
class CheckPlan:
    """Which calls of a `time` request come back as snapshots, and how the calls are prepared; chosen by the pytest
    process from the run's secret seed, so nothing before the request says which calls are checked.

    Every call of the request is prepared the same way: before each one (warm-up included) every input is rotated
    in its buffer by offsets drawn from `seed` and the call's number (`binding.roll_offsets`), so no two calls see the
    same inputs. The calls numbered in `checked` (counted from the first warm-up call), or all of them with
    `every_call`, are snapshotted after they return, outside the timed window. Around the timed calls come the
    announced checked calls: one before (junk in the outputs), one on new inputs drawn with `new_inputs_seed` right
    after, and one per input set after that (junk again).

    `poisoned_start`: the first call of the request finds its outputs holding the NaN poison of a correctness call
    instead of junk. Chosen per request from the secret seed, and both ways in every timing (the branch's own timing
    one way, the last A/B round the other), so a kernel that tells checked runs of calls from unchecked ones by what
    the outputs hold at first is checked in the run it takes for unchecked.
    """

    seed: int
    new_inputs_seed: int
    checked: tuple[int, ...] = ()
    every_call: bool = False
    # The announced calls too (an A/B round between two checked ones leaves them out: the preparation is the same)
    announced: bool = True
    poisoned_start: bool = False


class LoadRequest(TypedDict):
    op: Literal["load"]
    toolchain: str
    arch: str | None
    flags: tuple[str, ...]
    artifact: Artifact
    params: tuple[Param, ...]


class RunRequest(TypedDict):
    op: Literal["run"]
    spec: BindSpec


class TimeRequest(TypedDict):
    op: Literal["time"]
    spec: BindSpec
    policy: TimingPolicy
    calibration: NotRequired[dict[str, Any] | None]  # the device's calibration measured by an earlier worker
    plan: CheckPlan  # which calls come back to be checked (the pytest process compares them)


class BatchRequest(TypedDict):
    op: Literal["batch"]
    spec: BindSpec
    calls: int  # back-to-back calls, timed by the pytest process (timing/bounds.py)
    rotate: NotRequired[int | None]  # a seed: every call's inputs rotated first (`binding.roll_offsets`); None: not


class LoadResult(TypedDict):
    pid: int
    device: dict[str, Any]


class CheckedCall(TypedDict):
    call: str  # which call it was, e.g. "the call before the first timed call"
    # Which inputs it ran on, for the pytest process to compute them itself: ("start",) the starting values,
    # ("timed", n) timed call n's rotation of them, ("new",) the new inputs, ("set", i) input set i's starting values.
    # A snapshot filed under the wrong inputs compares against the wrong reference: it can only fail.
    inputs: tuple[Any, ...]
    snapshot: Snapshot
    setup: NotRequired[str]  # what its buffers held before it, as the failure message says it


class TimeResult(TypedDict):
    samples: Samples
    device: dict[str, Any]
    measure_wall_s: float
    checks: list[CheckedCall]
    timed_calls: int  # calls the runtime made (warm-up included): unannounced checks numbered past it were not reached
    sets: int  # input sets the calls rotated over (device runtimes with side figures: more than 1)
    worker_wall_s: float
    worker_phases_s: NotRequired[dict[str, float]]  # bind (buffers, reset), checked_calls (with their snapshots)
    calibration: NotRequired[dict[str, Any] | None]  # what this worker measured, for the next one on the device


class Reply(TypedDict, total=False):
    ok: bool
    result: Any
    error: str
    traceback: str
    fatal: bool  # the worker's context is gone (a sticky GPU fault): it exits after this reply
