"""The isolated worker process that loads and runs one kernel, and the supervisor above it.

Started by `launch.launch_worker` as
`python -m pytest_dcuopt.run.worker <response-fd> <pytest-pid> main-thread|other-thread [module,module...]`; the
worker imports the listed modules before it reads its first request (a spare worker does that ahead of need,
`spare_workers.py`, and answers `ping` once it has).
That process forks at once: the parent stays a small *supervisor*, the child is the *worker* that
loads the kernel. Requests arrive on stdin, responses leave on a dedicated pipe; the kernel's own
stdout is redirected to stderr (a log file) so that a printf in a kernel cannot corrupt the protocol.
A segfault or abort kills only the worker; faulthandler prints where it happened. Right after the fork, before any
kernel code is loaded, the worker contains itself (`containment.contain_worker`: no_new_privs, a seccomp filter).

The supervisor's side is `supervisor.py`; the worker's work on its kernel is `kernel_calls.py`, and the frames on its
pipes `frames.py`. This module is the worker's entry point and its request loop.
"""
from __future__ import annotations

import faulthandler
import os
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

from .containment import contain_worker
from .frames import read_frame, write_frame
from .kernel_calls import WorkerState
from .protocol import Reply
from .supervisor import die_with, supervise


def main() -> int:
    response_fd, parent = int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else os.getppid()
    # Linux sends the parent-death signal when the *thread* that started us ends: only trust it for a main thread.
    started_by_main_thread = len(sys.argv) > 3 and sys.argv[3] == "main-thread"
    preload = [name for name in sys.argv[4].split(",") if name] if len(sys.argv) > 4 else []
    supervisor = os.getpid()
    worker = os.fork()
    if worker:
        return supervise(worker, parent, response_fd, started_by_main_thread)
    containment = contain_worker()  # before any kernel code is loaded, and before this process starts threads
    die_with(supervisor)
    return serve(response_fd, preload, containment)


def import_ahead(modules: list[str]) -> list[str]:
    """Import what loading the kernel will import, while nobody waits for it yet; the names imported. A module that
    fails to import is left to the `load` request, which imports it again and reports the error there."""
    import importlib

    imported = []
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:  # reported by `load`, where the kernel needs it
            continue
        imported.append(name)
    return imported


# Exit statuses the worker itself chooses (besides a kernel's own exit()):
CHANNEL_BROKEN_STATUS = 86  # its reply could not be written: the kernel closed or reused the harness's descriptors
FORKED_CHILD_STATUS = 87  # a process the kernel forked returned into the harness and was stopped there
FATAL_STATUS = 3  # a fatal error (a sticky GPU fault) was replied; the process's context is gone


def serve(response_fd: int, preload: list[str] | None = None, containment: dict[str, Any] | None = None) -> int:
    faulthandler.enable(file=sys.stderr, all_threads=True)
    os.dup2(2, 1)  # kernel printf -> the log, never into the protocol
    requests = sys.stdin.buffer
    responses = os.fdopen(response_fd, "wb")
    imported = import_ahead(preload or [])
    state = WorkerState(containment or {})
    me = os.getpid()
    patience = FORKED_WAIT_S  # 0 once the kernel left a child that kept running: later calls do not wait on it
    # Requests arrive untyped off the pipe; each handler takes its own request shape (run/protocol.py).
    handlers: dict[str, Callable[[Any], Any]] = {"load": state.load, "run": state.run, "time": state.time,
                                                 "batch": state.batch, "snap": state.snap,
                                                 "ping": lambda _: {"pid": os.getpid(), "imported": imported}}
    while True:
        request = read_frame(requests)
        if request is None:
            return 0
        try:
            result = handlers[request["op"]](request)
            leave_if_forked(me)
            forked, lingering = forked_children(patience)
            patience = 0.0 if lingering else patience
            reply: Reply = ({"ok": True, "result": result} if not forked else
                            {"ok": False, "error": forked, "traceback": "", "fatal": True})
        except Exception as exc:  # report, keep serving
            leave_if_forked(me)
            fatal = bool(getattr(exc, "fatal", False))  # e.g. a sticky GPU fault: this process's context is gone
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc(),
                     "fatal": fatal}
        try:
            write_frame(responses, reply)
        except (OSError, ValueError):  # its descriptor was closed, or is now another file: nothing can be said
            os._exit(CHANNEL_BROKEN_STATUS)
        if reply.get("fatal"):
            return FATAL_STATUS


FORKED = ("the kernel forked and the child returned into the harness: both processes came back from solve() into "
          "the worker, which would have answered twice on one channel. The child was stopped. A kernel may start "
          "processes only if they never return from solve(): a child must exec() or _exit(), and the parent should "
          "wait for it before returning")


def leave_if_forked(me: int) -> None:
    """In a process the kernel forked that returned from solve() into the worker's loop: exit at once, before it
    writes anything, with a status its parent (the worker) recognises (`forked_children`)."""
    if os.getpid() != me:
        os._exit(FORKED_CHILD_STATUS)


# How long the worker waits, after a call, for the children the kernel left to end: a forked copy of the worker ends
# at once (`leave_if_forked`); a helper still running after this is left to the supervisor.
FORKED_WAIT_S = 2.0


def forked_children(wait_s: float) -> tuple[str | None, bool]:
    """(FORKED when a child of this process exited with FORKED_CHILD_STATUS, else None; whether a child was still
    running after `wait_s`). Returns at once when the kernel left no child, the usual case."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return None, False  # no child left
        if pid and os.WIFEXITED(status) and os.WEXITSTATUS(status) == FORKED_CHILD_STATUS:
            return f"{FORKED} (child pid {pid})", False
        if not pid:
            if time.monotonic() >= deadline:
                return None, True
            time.sleep(0.005)


if __name__ == "__main__":
    sys.exit(main())
