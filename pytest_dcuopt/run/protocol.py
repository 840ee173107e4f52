"""The messages between the pytest process (`isolation.IsolatedKernel`) and a kernel's worker (`worker.py`).

Each request is a pickled dict with an `op`; each reply is `{"ok": True, "result": ...}` or
`{"ok": False, "error": ..., "traceback": ...}`. The shapes are declared here once, so both sides and
the type checker agree on them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, TypedDict

if TYPE_CHECKING:
    from typing_extensions import NotRequired  # typing has it from 3.11; annotations are strings here

    from ..case.cabi import Param
    from ..timing.policy import Samples, TimingPolicy
    from ..toolchains.base import Artifact
    from ..toolchains.binding import BindSpec, Snapshot
    from ..toolchains.exchange import Exchange


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
    exchange: NotRequired[Exchange]  # what the snapshot may leave out (toolchains/exchange.py)


class TimeRequest(TypedDict):
    op: Literal["time"]
    spec: BindSpec
    policy: TimingPolicy
    calibration: NotRequired[dict[str, Any] | None]  # the device's calibration measured by an earlier worker
    check_calls: NotRequired[bool]  # make the checked calls around the timed ones (default True)
    exchange: NotRequired[Exchange]  # what the checked calls' snapshots may leave out (toolchains/exchange.py)


class BatchRequest(TypedDict):
    op: Literal["batch"]
    spec: BindSpec
    calls: int  # back-to-back calls, timed by the pytest process (timing/bounds.py)


class LoadResult(TypedDict):
    pid: int
    device: dict[str, Any]


class CheckedCall(TypedDict):
    call: str  # which call it was, e.g. "the call before the first timed call"
    snapshot: Snapshot
    setup: NotRequired[str]  # what its buffers held before it, as the failure message says it


class TimeResult(TypedDict):
    samples: Samples
    device: dict[str, Any]
    measure_wall_s: float
    checks: list[CheckedCall]
    checks_skipped: str | None  # why the timed calls were not checked (None: they were)
    worker_wall_s: float
    worker_phases_s: NotRequired[dict[str, float]]  # bind (buffers, reset), checked_calls (with their snapshots)
    calibration: NotRequired[dict[str, Any] | None]  # what this worker measured, for the next one on the device


class Reply(TypedDict, total=False):
    ok: bool
    result: Any
    error: str
    traceback: str
    fatal: bool  # the worker's context is gone (a sticky GPU fault): it exits after this reply
