"""Finding and ending the processes a worker leaves (run/processes.py), on real processes."""
from __future__ import annotations

import os
import secrets
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_dcuopt.run.processes import WORKER_TOKEN_ENV, descendants, end_subtree, marked_processes


def _running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] not in "ZX"


def _wait_for(condition, timeout_s: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


@pytest.fixture
def shell_with_children() -> Iterator[subprocess.Popen[bytes]]:
    """A shell with two sleeping children, one of them with a child of its own (three descendants)."""
    shell = subprocess.Popen(["sh", "-c", "sleep 60 & sh -c 'sleep 60 & wait' & wait"])
    try:
        _wait_for(lambda: len(descendants(shell.pid)) == 3)
        yield shell
    finally:
        for pid in descendants(shell.pid):
            os.kill(pid, 9)
        shell.kill()
        shell.wait()


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="needs /proc (Linux)")
def test_descendants_are_found_to_any_depth(shell_with_children: subprocess.Popen[bytes]) -> None:
    found = descendants(shell_with_children.pid)
    assert len(found) == 3 and shell_with_children.pid not in found
    assert sorted(len(descendants(pid)) for pid in found) == [0, 0, 1]  # the inner shell's own child


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="needs /proc (Linux)")
def test_end_subtree_ends_every_descendant_and_leaves_the_root(shell_with_children: subprocess.Popen[bytes]) -> None:
    below = descendants(shell_with_children.pid)
    end_subtree(shell_with_children.pid)
    _wait_for(lambda: not any(_running(pid) for pid in below))
    assert shell_with_children.wait(timeout=10) == 0  # not killed: it exits by itself once its children are gone


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="needs /proc (Linux)")
def test_marked_processes_finds_exactly_the_processes_carrying_the_token() -> None:
    token = secrets.token_hex(8)
    marked = subprocess.Popen(["sleep", "60"], env={**os.environ, WORKER_TOKEN_ENV: token})
    other = subprocess.Popen(["sleep", "60"], env={**os.environ, WORKER_TOKEN_ENV: token + "0"})
    try:
        assert marked_processes(token) == [marked.pid]
    finally:
        for process in (marked, other):
            process.kill()
            process.wait()
    assert marked_processes(token) == []
