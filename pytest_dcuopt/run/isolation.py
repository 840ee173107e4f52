"""Run kernels in a separate worker process so a crash or hang fails one branch, not the session.

Mechanism: one long-lived worker process per branch (`python -m pytest_dcuopt.run.worker`),
spoken to over pipes. A worker that dies (segfault, abort, exit) is reported with the
signal's name and restarted for the next call; a call that outlives its timeout kills the
worker, and later calls of that branch fail at once with the same reason (so Hypothesis
does not wait on a hang again and again).
"""
from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..case.cabi import Param
from ..errors import KernelCrashed, KernelTimeout, WorkerError
from ..toolchains.base import Artifact
from .worker import read_frame, write_frame


@dataclass(frozen=True)
class WorkerSpec:
    label: str  # e.g. "vector_add/cpu/b1", used in messages
    toolchain: str
    arch: str | None
    flags: tuple[str, ...]
    artifact: Artifact
    params: tuple[Param, ...]
    log_path: Path


class IsolatedKernel:
    def __init__(self, spec: WorkerSpec, timeout_s: float) -> None:
        self.spec = spec
        self.timeout_s = timeout_s
        self._proc: subprocess.Popen[bytes] | None = None
        self._responses: Any = None
        self._hung: str | None = None
        self.device: dict[str, Any] = {}

    def _start(self) -> None:
        read_fd, write_fd = os.pipe()
        self.spec.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = open(self.spec.log_path, "wb")  # one log per worker start; crash reports quote its tail
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "pytest_dcuopt.run.worker", str(write_fd)],
            stdin=subprocess.PIPE, stdout=log, stderr=log, pass_fds=(write_fd,), start_new_session=True,
        )
        log.close()
        os.close(write_fd)
        self._responses = os.fdopen(read_fd, "rb")
        loaded = self._exchange({"op": "load", "toolchain": self.spec.toolchain, "arch": self.spec.arch,
                                 "flags": self.spec.flags, "artifact": self.spec.artifact,
                                 "params": self.spec.params}, self.timeout_s, "loading the kernel")
        self.device = loaded.get("device", {})

    def request(self, op: str, timeout_s: float | None = None, **payload: Any) -> Any:
        if self._hung:
            raise KernelTimeout(self._hung)
        if self._proc is None or self._proc.poll() is not None:
            self._start()
        return self._exchange({"op": op, **payload}, timeout_s or self.timeout_s, op)

    def _exchange(self, message: dict[str, Any], timeout_s: float, what: str) -> Any:
        assert self._proc is not None and self._proc.stdin is not None
        try:
            write_frame(self._proc.stdin, message)
        except BrokenPipeError:
            self._raise_dead(what)
        ready, _, _ = select.select([self._responses], [], [], timeout_s)
        if not ready:
            self.close()
            self._hung = (f"{self.spec.label}: the kernel did not return within {timeout_s:g} s while {what} "
                          f"(dims {message.get('spec').dims if message.get('spec') else '-'}); its worker was killed. "
                          "Look for an infinite loop or a deadlock; raise --dcuopt-timeout if it is just slow.")
            raise KernelTimeout(self._hung)
        reply = read_frame(self._responses)
        if reply is None:
            self._raise_dead(what)
        if not reply["ok"]:
            raise WorkerError(f"{self.spec.label}: {reply['error']} while {what}\n{reply['traceback']}")
        return reply["result"]

    def _raise_dead(self, what: str) -> None:
        assert self._proc is not None
        code = self._proc.wait(timeout=10)
        self.close()
        cause = f"signal {_signal_name(-code)}" if code < 0 else f"exit status {code}"
        tail = self.log_tail()
        raise KernelCrashed(f"{self.spec.label}: the kernel's worker process died with {cause} while {what}. "
                            f"A crash here usually means an out-of-bounds access or a null pointer.\n"
                            f"worker log ({self.spec.log_path}):\n{tail}")

    def log_tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.spec.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def close(self) -> None:
        if self._proc is None:
            return
        if self._proc.poll() is None:
            try:
                os.killpg(self._proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        for stream in (self._proc.stdin, self._responses):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        self._proc = None


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)
