"""A worker process started ahead of need, so the next branch's worker is ready when its first test asks for it.

Why: a worker for a GPU kernel imports torch before it can load anything (5.0-5.3 s on the H200's host, 0.9-1.4 s on
a 2-core CPU box), and every branch starts its own worker. One spare at a time is kept: started right after a
worker has loaded its kernel (so a cold start never shares its cores with the spare's import), it imports the same
modules while the current branch runs its tests, and the next start with the same environment, calling thread and
modules takes it instead of starting a process (`IsolatedKernel._start`). A spare that does not match is ended and
a fresh worker starts as before: the outcome of a test never depends on whether its worker was a spare.

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

from .launch import Launched, end_worker_processes, launch_worker
from .worker import FrameError, read_frame, write_frame

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


@dataclass
class _Spare:
    key: StartKey
    launched: Launched
    log: Path
    settled: bool = False


class SpareWorkers:
    """Keeps at most one warm worker process for the session's next worker start."""

    def __init__(self, log_dir: Path, enabled: bool = True) -> None:
        self.log_dir = log_dir
        self.enabled = enabled
        self._spare: _Spare | None = None
        self.taken = 0  # starts served by a spare (the record of a run says how many of its starts were warm)
        self.discarded = 0  # spares ended unused: their key did not match, they died, or the session ended

    def offer(self, key: StartKey) -> None:
        """Start a spare for the next start with `key`, unless one is there already (or spares are off)."""
        if not self.enabled or self._spare is not None:
            return
        self.log_dir.mkdir(parents=True, exist_ok=True)
        log = self.log_dir / f".{SPARE_LABEL}-{os.getpid()}-{os.urandom(4).hex()}.log"
        self._spare = _Spare(key, launch_worker(dict(key.environ), log, SPARE_LABEL, key.preload), log)

    def take(self, key: StartKey, log_path: Path) -> Launched | None:
        """The spare, when it was started for `key` and is alive, its log moved to `log_path`; None otherwise (a
        spare that does not fit is ended: the caller starts a fresh worker)."""
        spare, self._spare = self._spare, None
        if spare is None:
            return None
        if spare.key != key or spare.launched.proc.poll() is not None:
            self._end(spare)
            return None
        try:  # the log follows the process: its file descriptor stays open across the rename
            log_path.parent.mkdir(parents=True, exist_ok=True)
            os.replace(spare.log, log_path)
        except OSError:
            self._end(spare)
            return None
        self.taken += 1
        return spare.launched

    def settle(self, timeout_s: float) -> None:
        """Return once the spare has finished importing its modules (it answers a ping after them); a spare that
        does not answer within `timeout_s` is ended."""
        spare = self._spare
        if spare is None or spare.settled:
            return
        if ping(spare.launched, timeout_s):
            spare.settled = True
        else:
            self._spare = None
            self._end(spare)

    def close(self) -> None:
        spare, self._spare = self._spare, None
        if spare is not None:
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
