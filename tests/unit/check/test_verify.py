"""The reference's time bound (`reference_deadline`): a SIGALRM timer on the main thread, said when it cannot be set."""
from __future__ import annotations

import signal
import threading
import time
from typing import Any

import pytest

from pytest_dcuopt.check.reference_outputs import ReferenceOvertime, reference_deadline


def test_a_sleeping_reference_is_interrupted_and_the_handler_restored() -> None:
    before = signal.getsignal(signal.SIGALRM)
    observations: dict[str, Any] = {}
    with pytest.raises(ReferenceOvertime), reference_deadline(0.2, observations):
        time.sleep(60)
    assert signal.getsignal(signal.SIGALRM) is before
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert observations == {}


def test_a_reference_that_returns_in_time_leaves_no_timer() -> None:
    with reference_deadline(30, {}):
        pass
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_off_the_main_thread_the_record_says_it_is_not_bounded() -> None:
    observations: dict[str, Any] = {}

    def run() -> None:
        with reference_deadline(30, observations):
            pass

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert observations["reference_timeout"].startswith("not bounded: the reference ran off the main thread")


def test_another_sigalrm_timer_is_left_alone_and_said() -> None:
    previous = signal.signal(signal.SIGALRM, lambda *_: None)
    signal.setitimer(signal.ITIMER_REAL, 100)
    observations: dict[str, Any] = {}
    try:
        with reference_deadline(30, observations):
            pass
        assert signal.getitimer(signal.ITIMER_REAL)[0] > 0  # still running: not ours to stop
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert "another SIGALRM timer was running" in observations["reference_timeout"]
