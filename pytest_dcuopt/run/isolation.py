"""Run kernels in a separate worker process so a crash or hang fails one branch, not the session.

Mechanism: one long-lived worker process per branch (`python -m pytest_dcuopt.run.worker`, a
supervisor with the worker below it, in a session and process group of their own), spoken to over
pipes. A worker that dies (segfault, abort, exit) is reported with the signal's name and restarted
for the next call; a call that outlives its timeout kills the worker, and later calls of that
branch fail at once with the same reason (so Hypothesis does not wait on a hang again and again).
Closing a worker ends every process it left: its process group, everything below its supervisor,
and every process that carries its token (see `processes.py`).

Placement (`devices.py`): with --dcuopt-devices a GPU kernel's worker starts with only its xdist worker's GPU
visible (the runtime reads the visibility variables when it initializes, so they are set in the environment the
worker starts with), and every worker knows the lock that makes its measurements exclusive (`lock`, taken by
bench/run.py around timing).

Starting (`launch.py`): a start takes one of the session's spare workers when one was started ahead for the same
environment (`spare_workers.py`: the worker then has its toolchain's modules, torch, imported already), else starts a
process; the record's `device.worker_start` says which. A case's workers are closed when the run moves on to another
case (session.release_workers), so their memory is not held while other cases run.

Scratch working directory: every worker starts in a fresh, empty folder of its own (`scratch_dir`), removed when the
worker is closed, so a kernel that writes, renames or deletes files relative to its working directory touches
nothing of the project. Every path the worker is given is absolute. This is not a sandbox: absolute paths, the
home directory and the rest of the file system stay reachable (see docs/reliability.md).

Timing under guard (`containment.py`, `timing/bounds.py`): before a `time` request, every process the worker started
is ended, and every other worker of this pytest process (with what it started) is stopped until the reply, so
nothing a kernel left running shares the cores with the branch being timed. The pytest process measures the
request's wall time and the worker's CPU time (all its threads, from /proc) itself; for a checked timing it then
times a batch of back-to-back calls until every thread of the worker sleeps again (`bounding_calls.py`), and refuses
the timing (`TimingRefused`) when the samples or the batch contradict the reported figures. The record's
`timing.bounds` keeps the figures, `device.containment` what the worker's containment applied.

Calibrations (`timing.calibration`): with a `CalibrationStore`, every `time` request carries the calibration the
first worker on this device measured (keyed by the device's lock name), and the reply's calibration is kept for
the next worker, so the event bracket and the delay kernel are calibrated once per device per session.
"""
from __future__ import annotations

import os
import select
import shutil
import subprocess
import time
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..case.cabi import Param
from ..errors import KernelCrashed, KernelTimeout, TamperedFiles, TimingRefused, WorkerError
from ..timing.bounds import (
    LEFTOVER_WATCH_S,
    leftover_problem,
    samples_exceed_wall,
)
from ..timing.calibration import CalibrationStore
from ..timing.policy import Samples
from ..toolchains.base import Artifact
from .bounding_calls import BoundingCalls
from .containment import frozen
from .crash_diagnosis import crash_hint, log_excerpt, signal_name
from .devices import DevicePin, TimingLock, pin_for_worker, timing_lock, xdist_worker_id
from .frames import FrameError, read_frame, write_frame
from .integrity import DIGESTS
from .launch import calling_thread, end_worker_processes, launch_worker, worker_environ
from .processes import cpu_seconds, descendants, kill_all
from .spare_workers import SpareWorkers, StartKey, quiet_needed

# How long an idle worker gets to exit by itself (and end what its kernel left) before it is killed.
GRACEFUL_EXIT_S = 5.0

@dataclass(frozen=True)
class WorkerSpec:
    label: str  # e.g. "vector_add/cpu/b1", used in messages
    toolchain: str
    arch: str | None
    flags: tuple[str, ...]
    artifact: Artifact
    params: tuple[Param, ...]
    log_path: Path
    devices: tuple[str, ...] = ()  # --dcuopt-devices: the GPUs xdist workers are pinned to, round robin
    platform: str | None = None  # the kernel's GPU platform (nvidia, amd); None: it runs on the host
    host_lock: bool = True  # host kernels: hold the host's timing lock (off: --dcuopt-no-host-lock)
    preload: tuple[str, ...] = ()  # modules the worker imports before its first request (Toolchain.worker_modules)


# Every worker of this pytest process: the ones not being timed are stopped while one is (`_others`).
_LIVE: weakref.WeakSet[IsolatedKernel] = weakref.WeakSet()


class IsolatedKernel:
    def __init__(self, spec: WorkerSpec, timeout_s: float, calibrations: CalibrationStore | None = None,
                 spares: SpareWorkers | None = None, quiet: Callable[[], None] | None = None) -> None:
        self.spec = spec
        self.timeout_s = timeout_s
        self.calibrations = calibrations  # shared by every branch of the session (None: each worker calibrates)
        self.spares = spares  # the session's spare workers, started ahead (None: every start is cold)
        self.quiet = quiet  # waits for the session's work beside the tests (its background builds) before a timing
        self.started: dict[str, Any] = {}  # the running worker's start: from a spare or not, seconds until loaded
        # Decided once per pytest process (its xdist worker id does not change): every start gets the same GPU.
        self.pin: DevicePin | None = (pin_for_worker(spec.devices, xdist_worker_id(), spec.platform)
                                      if spec.platform is not None else None)
        self.lock: TimingLock = timing_lock(self.pin, spec.platform, spec.host_lock)
        self._proc: subprocess.Popen[bytes] | None = None
        self._responses: Any = None
        self._hung: str | None = None
        self._tampered = False  # `_hung` names files the kernel rewrote (`_blame_tampering`)
        self._busy = False  # a request is in flight (an interrupted exchange leaves it True)
        self._token = ""
        self._scratch: Path | None = None
        self.device: dict[str, Any] = {}
        self.worker_pid: int | None = None  # the worker below the supervisor (`_proc` is the supervisor)
        self.guard: dict[str, Any] = {}  # what the last timings ended and stopped (the record's device.containment)
        _LIVE.add(self)

    def _start(self) -> None:
        began = time.perf_counter()
        refused = DIGESTS.check_library(self.spec.artifact.path, self.spec.label)
        if refused is not None:
            self._hung = refused  # every later call of this branch fails with the same reason
            raise WorkerError(refused)
        environ = worker_environ(self.environ(os.environ), os.getcwd())
        key = StartKey.of(environ, calling_thread(), self.spec.preload)
        launched = self.spares.take(key, self.spec.log_path) if self.spares is not None else None
        from_spare = launched is not None
        if launched is None:
            launched = launch_worker(environ, self.spec.log_path, self.spec.label, self.spec.preload)
        self._proc, self._responses = launched.proc, launched.responses
        self._token, self._scratch = launched.token, launched.scratch
        artifact = self.spec.artifact
        artifact = replace(artifact, path=artifact.path.absolute(), source=artifact.source.absolute())
        loaded = self._exchange({"op": "load", "toolchain": self.spec.toolchain, "arch": self.spec.arch,
                                 "flags": self.spec.flags, "artifact": artifact,
                                 "params": self.spec.params}, self.timeout_s, "loading the kernel")
        self.started = {"spare": from_spare, "seconds": round(time.perf_counter() - began, 4)}
        self.worker_pid = int(loaded["pid"])
        self.guard = {**loaded.get("device", {}).get("containment", {}), "worker_pid": self.worker_pid,
                      "ended_before_timing": 0, "stopped_during_timing": 0}
        self.device = {**loaded.get("device", {}), **self.placement()}
        if self.spares is not None:  # after this load, so a cold start does not share its cores with the spare's
            self.spares.offer(key)

    def environ(self, base: Mapping[str, str]) -> dict[str, str]:
        """The environment the worker starts with: `base`, with only the pinned GPU visible when there is a pin."""
        return self.pin.environ(base) if self.pin is not None else dict(base)

    def placement(self) -> dict[str, Any]:
        """What the record says about where the kernel ran: the physical GPU it was pinned to (`pin`), if any, and
        how the worker that ran it started (`worker_start`: taken from the spare or not, seconds until loaded)."""
        pin: dict[str, Any] = {"pin": self.pin.to_json()} if self.pin is not None else {}
        if self.guard:
            pin["containment"] = dict(self.guard)
        return {**pin, "worker_start": dict(self.started)} if self.started else pin

    def request(self, op: str, timeout_s: float | None = None, **payload: Any) -> Any:
        if self._hung:
            raise (TamperedFiles if self._tampered else KernelTimeout)(self._hung)
        if self._proc is not None and self._proc.poll() is not None:
            # It answered its last call, then died (a kernel's thread, a signal from outside): say so once.
            self._raise_dead("idle between calls (after answering the previous one)")
        if self._proc is None:
            self._start()
        if op == "time" and self.quiet is not None:
            self.quiet()  # no compiler beside a timing
        if op == "time" and self.spares is not None and quiet_needed(self.spec.platform):
            self.spares.settle(self.timeout_s)  # a spare still importing would share the timed cores
        store = self.calibrations if op == "time" else None
        if store is not None:
            payload = {**payload, "calibration": store.get(self.lock.name)}
        try:
            if op == "time":
                result = self._guarded_time(payload, timeout_s or self.timeout_s)
            else:
                result = self._exchange({"op": op, **payload}, timeout_s or self.timeout_s, op)
        finally:
            self._blame_tampering(op)
        if store is not None and isinstance(result, dict):
            store.keep(self.lock.name, result.get("calibration"))
        return result

    def _blame_tampering(self, op: str) -> None:
        """After a reply (or a failed exchange): a file the run relies on that changed meanwhile is blamed on this
        worker's kernel, and every call of its branch fails from now on (run/integrity.py `tampered_since`)."""
        changed = DIGESTS.tampered_since()
        if not changed:
            return
        self._hung = (f"{self.spec.label}: tampered with files the run relies on while its worker answered a {op!r} "
                      f"request: {'; '.join(changed)}. A kernel may write only its outputs; its verdicts are "
                      "withheld and the run fails at its end. Restore the files (git checkout, or a fresh "
                      "--dcuopt-cache-dir) before the next run.")
        self._tampered = True
        raise TamperedFiles(self._hung)

    def _guarded_time(self, payload: dict[str, Any], timeout_s: float) -> Any:
        """A `time` request with nothing else of this process's kernels running, bounded by what this process
        measures itself (the module's docstring); raises TimingRefused when the worker's figures are refuted.
        `payload["bound"]` (default True): whether the bounding batch follows; it is not sent, so the kernel cannot
        know while it is timed whether its figures will be bounded."""
        payload = dict(payload)
        bounded = bool(payload.pop("bound", True))
        leftover = self._end_leftovers()
        if leftover is not None:
            raise TimingRefused(f"{self.spec.label}: timing refused: {leftover}.")
        groups, pids = self._others()
        self.guard["stopped_during_timing"] = len(groups) + len(pids)
        with frozen(groups, pids):
            mine = self._mine()
            cpu_before, asked = cpu_seconds(mine), time.perf_counter()
            result = self._exchange({"op": "time", **payload}, timeout_s, "time")
            wall_s = time.perf_counter() - asked
            samples = result.get("samples") if isinstance(result, dict) else None
            if not isinstance(samples, Samples):
                return result
            bounds: dict[str, Any] = {"request_wall_s": round(wall_s, 6),
                                      "worker_cpu_s": round(cpu_seconds(self._mine()) - cpu_before, 6)}
            problem = samples_exceed_wall(samples.seconds, wall_s)
            if problem is None and bounded and samples.seconds:
                problem = BoundingCalls(self.spec.params, self.spec.toolchain, self._exchange,
                                        self._mine).refute(payload["spec"], samples, timeout_s, bounds)
            samples.extra["bounds"] = bounds
        if problem is not None:
            raise TimingRefused(f"{self.spec.label}: timing refused: {problem}.")
        return result

    def _mine(self) -> list[int]:
        """The worker and every process below its supervisor (not the supervisor, which only waits)."""
        if self._proc is None:
            return []
        return sorted({*([self.worker_pid] if self.worker_pid else []), *descendants(self._proc.pid)})

    def _end_leftovers(self) -> str | None:
        """End every process below the worker's supervisor other than the worker: nothing a kernel started runs
        while a branch is timed. Why the timing is refused when they had been working (timing/bounds.py
        `leftover_problem`: their CPU time while they are watched, before they are ended), or None."""
        if self._proc is None or self.worker_pid is None:
            return None
        left = [pid for pid in descendants(self._proc.pid) if pid != self.worker_pid]
        if not left:
            return None
        before = cpu_seconds(left)
        time.sleep(LEFTOVER_WATCH_S)
        used = cpu_seconds(left) - before
        kill_all(left)
        self.guard["ended_before_timing"] = self.guard.get("ended_before_timing", 0) + len(left)
        return leftover_problem(len(left), used)

    def _others(self) -> tuple[list[int], list[int]]:
        """The process groups of this process's other live workers, and the processes below their supervisors."""
        groups: list[int] = []
        pids: list[int] = []
        for other in list(_LIVE):
            proc = other._proc
            if other is self or proc is None or proc.poll() is not None:
                continue
            groups.append(proc.pid)  # started in a session of its own: its pid is its process group
            pids += descendants(proc.pid)
        return groups, pids

    def _exchange(self, message: dict[str, Any], timeout_s: float, what: str) -> Any:
        assert self._proc is not None and self._proc.stdin is not None
        self._busy = True
        try:
            write_frame(self._proc.stdin, message)
        except BrokenPipeError:
            self._raise_dead(what)
        ready, _, _ = select.select([self._responses], [], [], timeout_s)
        if not ready:
            self.close()
            spec = message.get("spec")
            self._hung = (f"{self.spec.label}: the kernel did not return within {timeout_s:g} s while {what} "
                          f"(dims {spec.dims if spec is not None else '-'}); its worker was killed. "
                          "Look for an infinite loop or a deadlock; raise --dcuopt-timeout if it is just slow.")
            raise KernelTimeout(self._hung)
        try:
            reply = read_frame(self._responses)
        except FrameError as exc:
            self.close()  # still marked busy: the worker and all it left are ended
            raise KernelCrashed(f"{self.spec.label}: the reply channel from its worker held {exc} while {what}: the "
                                "kernel wrote into a file descriptor it did not open (the harness's reply pipe). Its "
                                "worker was ended; the next call starts a fresh one. Write only to files the kernel "
                                "opens itself (or stdout/stderr, which go to the worker's log).") from None
        if reply is None:
            self._raise_dead(what)
        self._busy = False
        if not reply["ok"] and reply.get("fatal"):  # the worker exits after this reply; start a fresh one next
            self.close()
        if not reply["ok"]:
            raise WorkerError(f"{self.spec.label}: {reply['error']} while {what}\n{reply['traceback']}")
        return reply["result"]

    def _raise_dead(self, what: str) -> None:
        assert self._proc is not None
        code = self._proc.wait(timeout=10)  # the supervisor mirrors the worker's end
        self.close()
        log = self.log_text()
        name = signal_name(-code) if code < 0 else ""
        cause = f"signal {name}" if code < 0 else f"exit status {code}"
        raise KernelCrashed(f"{self.spec.label}: the kernel's worker process died with {cause} while {what}; "
                            f"{crash_hint(code, log)}. Every process it left was ended.\n"
                            f"worker log ({self.spec.log_path}):\n{log_excerpt(log)}")

    def log_text(self) -> str:
        try:
            return self.spec.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def close(self) -> None:
        """End the worker and every process it left. An idle worker exits by itself first (EOF on its stdin)
        and its supervisor ends what the kernel left; a busy, hung or dead one is killed with all of that."""
        if self._proc is None:
            return
        proc = self._proc
        if proc.poll() is None and not self._busy and proc.stdin is not None:
            try:
                proc.stdin.close()
                proc.wait(timeout=GRACEFUL_EXIT_S)
            except (OSError, subprocess.TimeoutExpired):
                pass
        if proc.returncode != 0:  # killed, crashed or still running: the supervisor may not have cleaned up
            end_worker_processes(proc.pid, self._token)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        self._busy = False
        for stream in (self._proc.stdin, self._responses):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        self._proc = None
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)  # whatever the kernel left in its working directory
            self._scratch = None


def close_all(workers: list[IsolatedKernel]) -> None:
    """Close several workers at once: each waits for its process to exit (a GPU worker's runtime takes a while to
    tear down), so closing them one after another would add those waits up."""
    live = [worker for worker in workers if worker._proc is not None]
    if len(live) <= 1:
        for worker in live:
            worker.close()
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=len(live), thread_name_prefix="dcuopt-close") as pool:
        list(pool.map(IsolatedKernel.close, live))
