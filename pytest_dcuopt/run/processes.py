"""Keeping a kernel's processes on a leash: parent-death signals, subreaping, finding and ending a process tree.

What is covered, on Linux (the worker layout is in `worker.py`):
- the worker dies with its supervisor (PR_SET_PDEATHSIG SIGKILL) and the supervisor with pytest
  (PR_SET_PDEATHSIG SIGTERM, whose handler ends the supervisor's whole subtree first); a thread
  that polls getppid() backs both up (it also covers the moment before prctl took effect);
- the supervisor is a child subreaper (PR_SET_CHILD_SUBREAPER): a kernel's child that calls
  setsid() or double-forks leaves the process group but stays in the supervisor's subtree, so
  `descendants()` finds it;
- every process of a worker carries WORKER_TOKEN_ENV in its environment (inherited across fork
  and exec), so a process orphaned after its supervisor was killed is still found by
  `marked_processes()`.
Not covered: a process that execs with a cleared environment *after* its supervisor died, and a
kernel that targets other processes of the same user on purpose (kill(-1, ...), a pid read from
/proc): containing those needs another user, a PID namespace or seccomp.
"""
from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

WORKER_TOKEN_ENV = "DCUOPT_WORKER_TOKEN"
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_PROC = Path("/proc")


def _prctl(option: int, value: int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, value, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def set_parent_death_signal(number: int) -> bool:
    """Ask Linux to send `number` to this process when its parent (thread) dies; False where unsupported."""
    return _prctl(_PR_SET_PDEATHSIG, number)


def set_child_subreaper() -> bool:
    """Orphaned descendants are re-parented to this process instead of init; False where unsupported."""
    return _prctl(_PR_SET_CHILD_SUBREAPER, 1)


def watch_parent(parent: int, on_gone: Callable[[], None], interval_s: float = 0.2) -> threading.Thread:
    """A daemon thread that calls `on_gone()` once getppid() is no longer `parent` (the parent died)."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(interval_s)
        on_gone()

    thread = threading.Thread(target=watch, name="dcuopt-parent-watchdog", daemon=True)
    thread.start()
    return thread


def _live_parent_of(pid: str) -> int | None:
    """The parent pid of a live process; None for zombies (dead, their children already re-parented) and the gone."""
    try:
        stat = (_PROC / pid / "stat").read_text()
    except OSError:
        return None
    # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ')'.
    fields = stat[stat.rfind(")") + 2:].split()
    if len(fields) < 2 or fields[0] in ("Z", "X"):
        return None
    return int(fields[1])


def descendants(root: int) -> list[int]:
    """Every live process below `root` in the process tree (children first), from /proc."""
    children: dict[int, list[int]] = {}
    for entry in _PROC.iterdir() if _PROC.is_dir() else ():
        if entry.name.isdigit():
            parent = _live_parent_of(entry.name)
            if parent is not None:
                children.setdefault(parent, []).append(int(entry.name))
    found: list[int] = []
    pending = list(children.get(root, ()))
    while pending:
        pid = pending.pop()
        found.append(pid)
        pending.extend(children.get(pid, ()))
    return found


def marked_processes(token: str) -> list[int]:
    """Processes of this user whose environment carries WORKER_TOKEN_ENV=token (one worker's processes)."""
    needle = f"\0{WORKER_TOKEN_ENV}={token}\0".encode()
    found = []
    for entry in _PROC.iterdir() if _PROC.is_dir() else ():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:  # another user's process, or gone
            continue
        if needle in b"\0" + environ:
            found.append(int(entry.name))
    return found


def kill_all(pids: Iterable[int], number: int = signal.SIGKILL) -> None:
    for pid in pids:
        try:
            os.kill(pid, number)
        except (ProcessLookupError, PermissionError):
            pass


def end_subtree(root: int, rounds: int = 5) -> None:
    """SIGKILL everything below `root`, again while new processes appear (a fork racing the kill)."""
    for _ in range(rounds):
        found = descendants(root)
        if not found:
            return
        kill_all(found)
        time.sleep(0.01)


def _tasks(pids: Iterable[int]) -> list[Path]:
    found: list[Path] = []
    for pid in pids:
        try:
            found += [task for task in (_PROC / str(pid) / "task").iterdir()]
        except OSError:  # gone
            continue
    return found


def _task_stat(task: Path) -> list[str] | None:
    try:
        stat = (task / "stat").read_text()
    except OSError:
        return None
    return stat[stat.rfind(")") + 2:].split()


def running_threads(pids: Iterable[int]) -> int:
    """How many threads of the processes are running or runnable (state R) now, read from /proc."""
    return sum(1 for task in _tasks(pids) if (_task_stat(task) or ["?"])[0] == "R")


def cpu_seconds(pids: Iterable[int]) -> float:
    """The CPU time the processes have used, in seconds (utime + stime of each, every thread counted, those that
    ended too), read from /proc: clock ticks, so 10 ms steps where the tick is 100 Hz."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        fields = _task_stat(_PROC / str(pid))
        if fields is not None and len(fields) > 12:
            total += (int(fields[11]) + int(fields[12])) / tick
    return total
