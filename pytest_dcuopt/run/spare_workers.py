"""A worker process started ahead of need, so the next branch's worker is ready when its first test asks for it.

Why: a worker for a GPU kernel imports torch before it can load anything (5.0-5.3 s on the H200's host, 0.9-1.4 s on
a 2-core CPU box), and every branch starts its own worker. Spares are started right after a worker has loaded its
kernel (so a cold start never shares its cores with their imports); they import the same modules while the current
branch runs its tests, and the next start with the same environment, calling thread and modules takes the oldest
instead of starting a process (`IsolatedKernel._start`). A spare that does not match is ended and a fresh worker
starts as before: the outcome of a test never depends on whether its worker was a spare.

Timing: a spare still importing would share the cores a host kernel is timed on, so before a timed request on the
host (or on a machine with fewer than `QUIET_CORES` cores) the spare is waited for (`settle`). A GPU kernel on a
larger host is timed while the spare imports: its samples are device-clock figures, and the spare runs on another
core.

A spare never runs a kernel: ending it is a plain kill. `--dcuopt-spare-workers 0` turns spares off.
"""
from __future__ import annotations

import os
import select
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .frames import FrameError, read_frame, write_frame
from .launch import Launched, end_worker_processes, launch_worker

QUIET_CORES = 4  # below this many cores, even a GPU kernel's timing waits for the spare (its launches need a core)
SPARE_LABEL = "spare"


@dataclass(frozen=True)
class StartKey:
    """What a started worker cannot change afterwards: its environment, the thread that started it (its parent-death
    signal follows that thread) and the modules it imported ahead."""

    environ: tuple[tuple[str, str], ...]
    thread: str
    preload: tuple[str, ...]

    @classmethod
    def of(cls, environ: Mapping[str, str], thread: str, preload: Sequence[str]) -> StartKey:
        return cls(tuple(sorted(environ.items())), thread, tuple(preload))


def quiet_needed(platform: str | None, cores: int | None = None) -> bool:
    """Whether timing must wait for a spare's start-up: kernels on the host always; GPU kernels on a small host."""
    count = cores if cores is not None else (os.cpu_count() or 1)
    return platform is None or count < QUIET_CORES


def default_count(cores: int | None = None) -> int:
    """Two spares on a host with `QUIET_CORES` cores or more, one below (where they compete with the tests)."""
    return 2 if (cores if cores is not None else (os.cpu_count() or 1)) >= QUIET_CORES else 1


@dataclass
class _Spare:
    key: StartKey
    launched: Launched
    log: Path
    settled: bool = False


class SpareWorkers:
    """Keeps up to `count` warm worker processes for the session's next worker starts, all for one key (the last
    start's). More than one hides more of the import when a branch's tests take less time than it (a benchmark-only
    run: about 1 s of work per branch against torch's 5 s on the H200's host)."""

    def __init__(self, log_dir: Path, count: int = 1) -> None:
        self.log_dir = log_dir
        self.count = count
        self._spares: list[_Spare] = []  # the oldest (the most warmed up) first
        self.taken = 0  # starts served by a spare
        self.discarded = 0  # spares ended unused: their key did not match, they died, or the session ended

    def offer(self, key: StartKey) -> None:
        """Start spares for the next starts with `key` until there are `count` (none when `count` is 0); spares for
        another key are ended first (the next start would not take them)."""
        for spare in [spare for spare in self._spares if spare.key != key]:
            self._spares.remove(spare)
            self._end(spare)
        while len(self._spares) < self.count:
            self.log_dir.mkdir(parents=True, exist_ok=True)
            log = self.log_dir / f".{SPARE_LABEL}-{os.getpid()}-{os.urandom(4).hex()}.log"
            self._spares.append(_Spare(key, launch_worker(dict(key.environ), log, SPARE_LABEL, key.preload), log))

    def take(self, key: StartKey, log_path: Path) -> Launched | None:
        """The oldest live spare started for `key`, its log moved to `log_path`; None when there is none (spares
        that do not fit, or died, are ended: the caller starts a fresh worker)."""
        while self._spares:
            spare = self._spares.pop(0)
            if spare.key != key or spare.launched.proc.poll() is not None:
                self._end(spare)
                continue
            try:  # the log follows the process: its file descriptor stays open across the rename
                log_path.parent.mkdir(parents=True, exist_ok=True)
                os.replace(spare.log, log_path)
            except OSError:
                self._end(spare)
                return None
            self.taken += 1
            return spare.launched
        return None

    def settle(self, timeout_s: float) -> None:
        """Return once every spare has finished importing its modules (each answers a ping after them); a spare
        that does not answer within `timeout_s` is ended."""
        for spare in list(self._spares):
            if spare.settled:
                continue
            if ping(spare.launched, timeout_s):
                spare.settled = True
            else:
                self._spares.remove(spare)
                self._end(spare)

    def close(self) -> None:
        spares, self._spares = self._spares, []
        for spare in spares:
            self._end(spare)

    def _end(self, spare: _Spare) -> None:
        """A spare never ran a kernel: kill it, then remove its scratch folder and (unless taken) its log."""
        self.discarded += 1
        launched = spare.launched
        end_worker_processes(launched.proc.pid, launched.token)
        launched.proc.wait()
        for stream in (launched.proc.stdin, launched.responses):
            if stream is not None:
                stream.close()
        shutil.rmtree(launched.scratch, ignore_errors=True)
        spare.log.unlink(missing_ok=True)


def ping(launched: Launched, timeout_s: float) -> bool:
    """Send a `ping` and wait for its answer; False when the worker does not answer in time or the channel broke."""
    assert launched.proc.stdin is not None
    try:
        write_frame(launched.proc.stdin, {"op": "ping"})
        ready, _, _ = select.select([launched.responses], [], [], timeout_s)
        reply = read_frame(launched.responses) if ready else None
    except (OSError, FrameError):
        return False
    return bool(reply and reply.get("ok"))
