"""Starting and ending a kernel's worker process (the process layout is in `worker.py`, its leash in
`processes.py`; `isolation.py` speaks to a started worker, `spare_workers.py` keeps one started ahead)."""
from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from .processes import WORKER_TOKEN_ENV, descendants, kill_all, marked_processes

SCRATCH_PREFIX = "dcuopt-worker-"
PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the folder holding pytest_dcuopt/


# A 1 MiB reply pipe instead of Linux's 64 KiB: 384 MB of snapshot crossed in 0.15 s instead of 0.39 s (fewer
# wake-ups per byte). Linux only; an unprivileged user's pipe quota may refuse it, and then the default stays.
PIPE_BYTES = 1 << 20


def widen_pipe(fd: int) -> None:
    import fcntl

    set_size = getattr(fcntl, "F_SETPIPE_SZ", None)
    if set_size is None:
        return
    try:
        fcntl.fcntl(fd, set_size, PIPE_BYTES)
    except OSError:
        pass  # over the user's pipe-buffer quota: a slower pipe, nothing else


def scratch_dir(label: str) -> Path:
    """A fresh, empty working directory for one worker start (in the system's temporary folder)."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in label)[-60:]
    return Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{safe}-"))


@dataclass(frozen=True)
class Launched:
    """A started worker: its supervisor process, its reply channel, the token its processes carry, its scratch dir."""

    proc: subprocess.Popen[bytes]
    responses: IO[bytes]
    token: str
    scratch: Path


def launch_worker(environ: Mapping[str, str], log_path: Path, label: str, preload: Sequence[str] = ()) -> Launched:
    """Start `python -m pytest_dcuopt.run.worker` in a fresh scratch folder, its output going to `log_path` (one log
    per start; crash reports quote its tail). It imports `preload` before it reads its first request."""
    read_fd, write_fd = os.pipe()
    widen_pipe(write_fd)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    token = secrets.token_hex(8)
    scratch = scratch_dir(label)
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "pytest_dcuopt.run.worker", str(write_fd), str(os.getpid()), calling_thread(),
             ",".join(preload)],
            stdin=subprocess.PIPE, stdout=log, stderr=log, pass_fds=(write_fd,), start_new_session=True,
            cwd=scratch, env={**environ, WORKER_TOKEN_ENV: token},
        )
    os.close(write_fd)
    return Launched(proc, os.fdopen(read_fd, "rb"), token, scratch)


def worker_environ(base: Mapping[str, str], project: str) -> dict[str, str]:
    """`base`, with PYTHONPATH holding what `python -m` started in `project` (pytest's working directory) would import
    from: `project` itself, so Python kernels import their project's modules as before, and this package's source
    tree when it is not installed. (An installed package's site-packages folder is not put ahead of the standard
    library.) The worker's own working directory is its scratch folder. PYTEST_CURRENT_TEST is left out: a worker
    serves many tests (and a spare is started during another branch's test), so it would name the wrong one."""
    paths = [project, *(p for p in base.get("PYTHONPATH", "").split(os.pathsep) if p)]
    if PACKAGE_ROOT.name not in ("site-packages", "dist-packages"):
        paths.insert(0, str(PACKAGE_ROOT))
    kept = {name: value for name, value in base.items() if name != "PYTEST_CURRENT_TEST"}
    return {**kept, "PYTHONPATH": os.pathsep.join(dict.fromkeys(paths))}


def calling_thread() -> str:
    return "main-thread" if threading.current_thread() is threading.main_thread() else "other-thread"


def end_worker_processes(supervisor: int, token: str) -> None:
    """SIGKILL a worker's process group, everything below its supervisor, and every process carrying its token.

    The descendants are read before the group is killed (killing the supervisor re-parents them); the token
    finds a kernel's child that left both the group (setsid) and the tree (its supervisor was killed first).
    """
    below = descendants(supervisor)
    try:
        os.killpg(supervisor, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    kill_all(below)
    kill_all(marked_processes(token) if token else ())
