"""The supervisor: the small parent of a kernel's worker process (the layout is in `worker.py`).

Why a supervisor: a kernel's getppid() is the supervisor, not pytest, so a kernel that kills its
parent ends its own worker (reported as a crash), not the session. The supervisor is a subreaper:
a kernel's setsid/double-forked children stay below it and are ended when the worker ends. It
mirrors the worker's exit status (a signal is re-raised), dies with pytest (after ending its
subtree), and the worker dies with it. See `processes.py` for what is and is not covered.
"""
from __future__ import annotations

import os
import resource
import signal
import sys
import time
from typing import Any

from .processes import end_subtree, set_child_subreaper, set_parent_death_signal, watch_parent


def die_with(supervisor: int) -> None:
    """The worker must not outlive its supervisor: a parent-death SIGKILL, and a watchdog thread behind it."""
    set_parent_death_signal(signal.SIGKILL)
    if os.getppid() != supervisor:  # it died before prctl took effect
        os._exit(1)
    watch_parent(supervisor, lambda: os._exit(1))


def supervise(worker: int, parent: int, response_fd: int, parent_death_signal: bool) -> int:
    """Wait for the worker, end every process left below us, then exit as the worker did."""
    os.close(response_fd)  # only the worker answers: its death must close the channel
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)  # pytest closing stdin must reach the worker alone
    os.close(devnull)
    set_child_subreaper()

    def end_everything(*_: Any) -> None:
        end_subtree(os.getpid())
        os._exit(1)

    signal.signal(signal.SIGTERM, end_everything)
    if parent_death_signal:
        set_parent_death_signal(signal.SIGTERM)
    watch_parent(parent, end_everything)
    if os.getppid() != parent:  # pytest died before prctl took effect
        end_everything()
    try:
        _, status, usage = os.wait4(worker, 0)
        peak_kib = usage.ru_maxrss  # KiB on Linux: the worker's peak resident memory
    except ChildProcessError:
        status, peak_kib = 0, 0
    if status:
        note_end(status, worker, peak_kib)
    end_subtree(os.getpid())
    return _mirror(status)


# A line the supervisor writes into the worker's log when the worker ends abnormally: the pytest side reads the
# worker's peak memory from it (`isolation._raise_dead`).
END_NOTE = "dcuopt supervisor: the worker ended"


def note_end(status: int, pid: int, peak_kib: int) -> None:
    how = (f"signal {_signal_label(os.WTERMSIG(status))}" if os.WIFSIGNALED(status)
           else f"exit status {os.waitstatus_to_exitcode(status)}")
    try:
        os.write(2, f"{END_NOTE} (pid {pid}) with {how}; its peak memory (max RSS) was {peak_kib // 1024} MiB\n"
                    .encode())
    except OSError:
        pass  # no log to write to: the message on the pytest side still names the signal or status


def _signal_label(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def _mirror(status: int) -> int:
    """Exit like the worker: re-raise its signal (without a core dump), or return its exit status."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if number not in (signal.SIGKILL, signal.SIGSTOP):  # their action cannot be changed (EINVAL)
            signal.signal(number, signal.SIG_DFL)
        sys.stdout.flush()
        os.kill(os.getpid(), number)
        time.sleep(1)  # the signal is delivered before this returns, unless its default action is to ignore it
        return 128 + number
    return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1
