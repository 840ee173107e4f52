"""SIGTERM and SIGINT in the pytest process: stop cleanly, keep the results, exit as the signal says.

CI cancellation and timeouts send SIGTERM, which by default kills Python on the spot: no state.json,
workers left behind. `InterruptGuard` turns the first SIGTERM/SIGINT into a KeyboardInterrupt, which
pytest handles like Ctrl-C: the running test stops, `pytest_sessionfinish` runs (workers are ended,
the partial state is written and marked `interrupted`), then the process exits with the status the
signal gives without the plugin: SIGTERM is re-raised at exit (status 143 in a shell, -15 from
Popen); SIGINT keeps pytest's own exit status 2 (ExitCode.INTERRUPTED). A second signal of the same
kind ends the process at once. Handlers someone else installed are left alone.
"""
from __future__ import annotations

import atexit
import os
import signal
import sys
import threading
from types import FrameType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest

HANDLED = (signal.SIGTERM, signal.SIGINT)
_DEFAULTS = (signal.SIG_DFL, signal.default_int_handler)


class InterruptGuard:
    def __init__(self) -> None:
        self.received: str | None = None  # the name of the first signal, e.g. "SIGTERM"
        self.finishing = False  # the session is ending: record the signal, do not interrupt the state write
        self.raised: str | None = None  # a KeyboardInterrupt that no signal of ours raised stopped the run
        self._previous: dict[int, object] = {}

    @property
    def stopped_by(self) -> str | None:
        """What stopped the run early (the signal's name, or "KeyboardInterrupt"); None when it ran to its end."""
        return self.received or self.raised

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        """pytest stopped on a KeyboardInterrupt raised by code (a ref.py's `raise KeyboardInterrupt`, or Ctrl-C
        under someone else's SIGINT handler): the results are as partial as after a signal, so the state says so."""
        if self.received is None and isinstance(excinfo.value, KeyboardInterrupt):
            self.raised = type(excinfo.value).__name__

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for number in HANDLED:
            if signal.getsignal(number) in _DEFAULTS:
                self._previous[number] = signal.signal(number, self._handle)

    def uninstall(self) -> None:
        for number, previous in self._previous.items():
            if signal.getsignal(number) == self._handle:
                signal.signal(number, previous)  # type: ignore[arg-type]
        self._previous.clear()

    def _handle(self, number: int, frame: FrameType | None) -> None:
        name = signal.Signals(number).name
        if self.received is not None:  # asked twice: stop now
            signal.signal(number, signal.SIG_DFL)
            os.kill(os.getpid(), number)
            return
        self.received = name
        if number == signal.SIGTERM:
            atexit.register(_exit_by_signal, number)
        if not self.finishing:
            raise KeyboardInterrupt(f"{name} received: stopping the run; the results so far go to state.json, "
                                    "marked interrupted, and every kernel worker is ended")


def _exit_by_signal(number: int) -> None:
    """At interpreter exit: die by `number` so the caller sees the conventional status (128 + signal)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    signal.signal(number, signal.SIG_DFL)
    os.kill(os.getpid(), number)
