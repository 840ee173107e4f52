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
environment (`spares.py`: the worker then has its toolchain's modules, torch, imported already), else starts a
process; the record's `device.worker_start` says which. A case's workers are closed when the run moves on to another
case (session.release_workers), so their memory is not held while other cases run.

Scratch working directory: every worker starts in a fresh, empty folder of its own (`scratch_dir`), removed when the
worker is closed, so a kernel that writes, renames or deletes files relative to its working directory touches
nothing of the project. Every path the worker is given is absolute. This is not a sandbox: absolute paths, the
home directory and the rest of the file system stay reachable (see docs/reliability.md).

Calibrations (`timing.calibration`): with a `CalibrationStore`, every `time` request carries the calibration the
first worker on this device measured (keyed by the device's lock name), and the reply's calibration is kept for
the next worker, so the event bracket and the delay kernel are calibrated once per device per session.
"""
from __future__ import annotations

import os
import re
import select
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..case.buffers import memory_bytes
from ..case.cabi import Param
from ..errors import KernelCrashed, KernelTimeout, WorkerError
from ..timing.calibration import CalibrationStore
from ..toolchains.base import Artifact
from .devices import DevicePin, TimingLock, pin_for_worker, timing_lock, xdist_worker_id
from .launch import calling_thread, end_worker_processes, launch_worker, worker_environ
from .spares import SpareWorkers, StartKey, quiet_needed
from .worker import CHANNEL_BROKEN_STATUS, END_NOTE, FATAL_STATUS, FrameError, read_frame, write_frame

# How long an idle worker gets to exit by itself (and end what its kernel left) before it is killed.
GRACEFUL_EXIT_S = 5.0
_SIGNAL_HINTS = {
    "SIGSEGV": "a crash here usually means an out-of-bounds access or a null pointer",
    "SIGBUS": "a crash here usually means a misaligned or out-of-bounds access",
    "SIGFPE": "an arithmetic fault: most often an integer division by zero (or of INT_MIN by -1) in the kernel",
    "SIGILL": "an illegal instruction: code built for instructions this CPU lacks (-march), or __builtin_trap()",
    "SIGTERM": "someone outside the harness ended it (the kernel itself, or a process that signalled it)",
}


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
        self._busy = False  # a request is in flight (an interrupted exchange leaves it True)
        self._token = ""
        self._scratch: Path | None = None
        self.device: dict[str, Any] = {}

    def _start(self) -> None:
        began = time.perf_counter()
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
        self.device = {**loaded.get("device", {}), **self.placement()}
        if self.spares is not None:  # after this load, so a cold start does not share its cores with the spare's
            self.spares.offer(key)

    def environ(self, base: Mapping[str, str]) -> dict[str, str]:
        """The environment the worker starts with: `base`, with only the pinned GPU visible when there is a pin."""
        return self.pin.environ(base) if self.pin is not None else dict(base)

    def placement(self) -> dict[str, Any]:
        """What the record says about where the kernel ran: the physical GPU it was pinned to (`pin`), if any, and
        how the worker that ran it started (`worker_start`: taken from the spare or not, seconds until loaded)."""
        pin = {"pin": self.pin.to_json()} if self.pin is not None else {}
        return {**pin, "worker_start": dict(self.started)} if self.started else pin

    def request(self, op: str, timeout_s: float | None = None, **payload: Any) -> Any:
        if self._hung:
            raise KernelTimeout(self._hung)
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
        result = self._exchange({"op": op, **payload}, timeout_s or self.timeout_s, op)
        if store is not None and isinstance(result, dict):
            store.keep(self.lock.name, result.get("calibration"))
        return result

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
        name = _signal_name(-code) if code < 0 else ""
        cause = f"signal {name}" if code < 0 else f"exit status {code}"
        raise KernelCrashed(f"{self.spec.label}: the kernel's worker process died with {cause} while {what}; "
                            f"{crash_hint(code, log)}. Every process it left was ended.\n"
                            f"worker log ({self.spec.log_path}):\n{log_excerpt(log)}")

    def log_text(self) -> str:
        try:
            return self.spec.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def log_tail(self, lines: int = 15) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])

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


def crash_hint(code: int, log: str) -> str:
    """The likely cause of a worker's end with `code` (negative: a signal) and the fix, read with its log."""
    if code >= 0:
        return _EXIT_HINTS.get(code, f"the kernel (or a library it calls) called exit({code}) during the call, or the "
                                     "worker failed outside a call (see its log). A kernel must return from solve()")
    name = _signal_name(-code)
    if name == "SIGKILL":
        return _killed_hint(log)
    if name == "SIGABRT":
        return _abort_hint(log)
    return _SIGNAL_HINTS.get(name, f"the kernel raised {name} or was sent it")


_EXIT_HINTS = {
    0: "it exited normally in the middle of the call: the kernel (or a library it calls) called exit(0). A kernel "
       "must return from solve(), never end the process",
    CHANNEL_BROKEN_STATUS: "its reply could not be written: the kernel closed (or reused) file descriptors it did not "
                           "open, the harness's reply pipe and log among them, so the log may be empty. Close only "
                           "the descriptors the kernel opened itself",
    FATAL_STATUS: "it reported a fatal error (a sticky GPU fault) and ended, as it must",
}
_HEAP_WORDS = ("free(): ", "double free", "corrupted", "malloc(): ", "munmap_chunk", "realloc(): ", "stack smashing")


def _abort_hint(log: str) -> str:
    if "terminate called after throwing" in log or "terminate called without an active exception" in log:
        return ("a C++ exception left solve(): an extern \"C\" function cannot pass it to the harness, so "
                "std::terminate aborted (its what() line is in the log below). Catch exceptions inside solve()")
    if any(word in log for word in _HEAP_WORDS):
        return ("the C library found its heap corrupted (its message is in the log below): most likely a write "
                "before or past a buffer (y[-1], y[N]) overwrote its bookkeeping. Check the kernel's indices at the "
                "buffers' ends")
    return ("abort() was called: an assert in the kernel, a runtime error it could not recover from, or heap "
            "corruption found by the C library (a write before or past a buffer, e.g. y[-1])")


def _killed_hint(log: str) -> str:
    found = re.findall(rf"{re.escape(END_NOTE)} .*peak memory \(max RSS\) was (\d+) MiB", log)
    if not found:  # the supervisor notes every abnormal end of its worker: it was killed itself
        return ("the worker's supervisor was killed too (it left no note): most likely a kernel that signalled its "
                "parent (a kernel's getppid() is the supervisor), else the out-of-memory killer or someone outside "
                "the harness")
    total = memory_bytes()
    machine = f" of this machine's {total / 2**30:.1f} GiB" if total else ""
    return (f"SIGKILL comes from the out-of-memory killer (the worker had used up to {found[-1]} MiB{machine} at its "
            "peak: if that is near the memory this machine or its container allows, lower the sizes in dims.json and "
            "`dim_ranges`, or the workspace the kernel allocates), from a kernel that signalled itself, or from "
            "someone outside the harness")


def log_excerpt(log: str, lines: int = 15) -> str:
    """The end of a worker's log; when faulthandler dumped the stacks (a fatal signal), the lines just before the
    dump (the kernel's or the C library's last words: an exception's what(), a heap error) and the dump's head."""
    text = log.splitlines()
    start = next((i for i, line in enumerate(text) if line.startswith("Fatal Python error")), None)
    if start is None:
        return "\n".join(text[-lines:])
    notes = [line for line in text[start:] if line.startswith(END_NOTE)]
    dump = text[start:start + lines - 5]
    cut = ["  ..."] if len(text) - len(notes) > start + len(dump) else []
    return "\n".join(text[max(0, start - 5):start] + dump + cut + notes)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)
