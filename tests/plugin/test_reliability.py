"""Reliability: faults survived, nothing left running, no wrong champion (issue 11).

Black-box like test_trust.py: pytest runs in a subprocess on fixture cases from tests/data/cases, and the
tests look only at what it leaves behind: exit status, state.json, terminal output, and the processes in
/proc. Processes a test finds still running (on a regression) are ended by the test, by pid, after checking
that they carry this test's marker in their environment.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CASES
from tests.context import skip_if_no_cuda_device

PIDFILE_ENV = "DCUOPT_TEST_ESCAPE_PIDFILE"  # the escapes fixture's daemons append their pid here


# ----- /proc helpers (independent of the plugin's own) ------------------------------------------------------------
def _stat_fields(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rfind(")") + 2:].split()


def is_running(pid: int) -> bool:
    """Alive and not a zombie (a zombie is dead, only not yet reaped)."""
    fields = _stat_fields(pid)
    return fields is not None and fields[0] not in ("Z", "X")


def process_tree(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat_fields(int(entry.name))
            if fields is not None:
                children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, pending = [], list(children.get(root, ()))
    while pending:
        pid = pending.pop()
        found.append(pid)
        pending.extend(children.get(pid, ()))
    return found


def still_running(pids: list[int], grace_s: float = 5.0) -> list[int]:
    deadline = time.monotonic() + grace_s
    while True:
        left = [pid for pid in pids if is_running(pid)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def carries(pid: int, marker: str) -> bool:
    try:
        return marker.encode() in Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False


def end_leftovers(pids: list[int], marker: str) -> None:
    """Clean up after a regression: SIGKILL our own leftover processes (checked by their environment)."""
    for pid in pids:
        if is_running(pid) and carries(pid, marker):
            os.kill(pid, signal.SIGKILL)


def daemon_pids(pidfile: Path) -> list[int]:
    return [int(line) for line in pidfile.read_text().split()] if pidfile.exists() else []


def state_of(pytester: pytest.Pytester, run_dir: str = "run") -> dict[str, Any]:
    return json.loads((pytester.path / run_dir / "state.json").read_text())


def branches(state: dict[str, Any], case: str) -> dict[str, Any]:
    return state["cases"][case]["toolchains"]["cpu"]["branches"]


# ----- running pytest by hand, to signal it mid-run ---------------------------------------------------------------
@pytest.fixture
def pidfile(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    path = pytester.path / "daemon.pids"
    monkeypatch.setenv(PIDFILE_ENV, str(path))
    yield path
    end_leftovers(daemon_pids(path), f"{PIDFILE_ENV}={path}")


def start_hanging_run(pytester: pytest.Pytester, cache: Path) -> subprocess.Popen[bytes]:
    """pytest on escapes/daemon_then_hang: its kernel leaves a setsid daemon, then spins until it is killed."""
    shutil.copytree(CASES / "escapes", pytester.path / "escapes")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_ADDOPTS", "PYTEST_XDIST"))}
    command = [sys.executable, "-m", "pytest", "escapes", "-k", "daemon_then_hang and correctness",
               f"--dcuopt-cache-dir={cache}", f"--dcuopt-run-dir={pytester.path / 'run'}", "--dcuopt-timeout=300",
               "-p", "no:cacheprovider", "-q"]
    with open(pytester.path / "out.txt", "wb") as output:
        return subprocess.Popen(command, cwd=pytester.path, env=env, stdout=output, stderr=subprocess.STDOUT)


def wait_until_spinning(run: subprocess.Popen[bytes], pidfile: Path) -> list[int]:
    """The pytest process's descendants once the kernel runs (its daemon has written its pid)."""
    deadline = time.monotonic() + 120
    while not daemon_pids(pidfile):
        assert run.poll() is None, "pytest ended before the kernel started"
        assert time.monotonic() < deadline, "the kernel did not start within 120 s"
        time.sleep(0.1)
    time.sleep(0.5)  # the worker is inside solve() now, spinning
    return process_tree(run.pid)


@pytest.mark.parametrize(("number", "expected_status"), [(signal.SIGTERM, -signal.SIGTERM), (signal.SIGINT, 2)],
                         ids=["SIGTERM", "SIGINT"])
def test_a_signal_writes_the_partial_state_and_ends_every_worker(pytester: pytest.Pytester, shared_build_cache: Path,
                                                                 pidfile: Path, number: int,
                                                                 expected_status: int) -> None:
    """CI cancellation sends SIGTERM: the state so far must be written (marked interrupted), the spinning worker and
    the setsid daemon its kernel left must be ended, and the exit status must be the signal's (SIGTERM: killed by
    SIGTERM, as without the plugin; SIGINT: pytest's own 2)."""
    run = start_hanging_run(pytester, shared_build_cache)
    workers: list[int] = []
    try:
        workers = wait_until_spinning(run, pidfile)
        assert workers, "no worker process found below pytest"
        run.send_signal(number)
        status = run.wait(timeout=60)
        output = (pytester.path / "out.txt").read_text(errors="replace")
        assert status == expected_status, output
        state = state_of(pytester)
        assert state["interrupted"] == signal.Signals(number).name
        assert "daemon_then_hang" in branches(state, "escapes")
        head = (pytester.path / "run" / "summary.md").read_text().splitlines()[:3]
        assert any(line.startswith(f"> **Interrupted by {signal.Signals(number).name}**") for line in head), head
        assert still_running(workers + daemon_pids(pidfile)) == []
    finally:
        run.kill()
        end_leftovers(workers, f"{PIDFILE_ENV}={pidfile}")


def test_sigkill_of_pytest_ends_its_workers_and_what_their_kernels_left(pytester: pytest.Pytester,
                                                                       shared_build_cache: Path,
                                                                       pidfile: Path) -> None:
    """Nothing can run in pytest after SIGKILL: the workers must notice their parent is gone, end the processes
    their kernel left (here a setsid daemon) and exit, instead of spinning at 100% CPU forever."""
    run = start_hanging_run(pytester, shared_build_cache)
    workers: list[int] = []
    try:
        workers = wait_until_spinning(run, pidfile)
        assert workers, "no worker process found below pytest"
        run.kill()
        run.wait(timeout=30)
        assert still_running(workers + daemon_pids(pidfile)) == []
    finally:
        end_leftovers(workers, f"{PIDFILE_ENV}={pidfile}")


def test_a_setsid_daemon_left_by_a_kernel_is_ended_with_its_worker(run_plugin, pytester: pytest.Pytester,
                                                                   pidfile: Path) -> None:
    """The daemon left the worker's process group and session; it must still be ended at the end of the run."""
    result = run_plugin(CASES / "escapes", args=("-k", "setsid_daemon and correctness", "--dcuopt-examples=3"))
    result.assert_outcomes(passed=1, deselected=7)
    daemons = daemon_pids(pidfile)
    assert daemons, "the kernel left no daemon (fixture broken?)"
    assert still_running(daemons) == []


def test_a_kernel_that_kills_its_parent_fails_alone(run_plugin, pytester: pytest.Pytester) -> None:
    """kill(getppid(), SIGKILL) from a kernel must end its own worker, reported as a crash, not the session."""
    result = run_plugin(CASES / "escapes", args=("-k", "(kills_parent or baseline) and correctness",
                                                 "--dcuopt-examples=3"))
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    result.assert_outcomes(passed=1, failed=1, deselected=6)
    result.stdout.fnmatch_lines(["*kills_parent*died with signal SIGKILL*signalled its parent*"])
    record = branches(state_of(pytester), "escapes")["kills_parent"]
    assert record["correct"] is False
    assert record["error"]["kind"] == "kernel crashed"


# ----- anti-cheat on timed calls ----------------------------------------------------------------------------------
def test_a_kernel_that_skips_work_when_its_output_is_filled_is_caught_and_never_crowned(
        run_plugin, pytester: pytest.Pytester) -> None:
    """`if (!isnan(y[0])) return;` passes every correctness call (outputs poisoned with NaN) and was crowned at
    5.13x; the checked calls among its timed calls must catch it."""
    result = run_plugin(CASES / "lazy_output", args=("--dcuopt-examples=5",))
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["FAILED *test_benchmark_cpu[[]skips_when_filled[]]*"])
    result.stdout.fnmatch_lines(["*skips_when_filled: wrong outputs on the call * timed call*"])
    toolchain = state_of(pytester)["cases"]["lazy_output"]["toolchains"]["cpu"]
    lazy = toolchain["branches"]["skips_when_filled"]
    assert lazy["correct"] is False
    assert lazy["error"]["kind"] == "timed calls wrong"
    assert lazy["champion"] is False and toolchain["champion"] == "baseline"
    assert toolchain["branches"]["baseline"]["correct"] is True
    assert toolchain["branches"]["baseline"]["timing"]["timed_calls_checked"] == 2  # before the first, after the last


@skip_if_no_cuda_device
def test_a_lazy_cuda_kernel_is_caught_on_the_device(run_plugin, pytester: pytest.Pytester) -> None:
    """The same cheat on a GPU, element by element; small buffers are timed over rotated input sets, and the call
    after the last timed call is checked on every set."""
    result = run_plugin(CASES / "lazy_output_cuda", args=("--dcuopt-toolchain=cuda", "--dcuopt-examples=5"))
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*skips_filled_elements: wrong outputs on the call * timed call*"])
    toolchain = state_of(pytester)["cases"]["lazy_output_cuda"]["toolchains"]["cuda"]
    lazy = toolchain["branches"]["skips_filled_elements"]
    assert lazy["correct"] is False and lazy["error"]["kind"] == "timed calls wrong"
    assert toolchain["champion"] == "baseline"
    assert toolchain["branches"]["baseline"]["timing"]["timed_calls_checked"] >= 2


# ----- guard zones ------------------------------------------------------------------------------------------------
def test_a_write_far_past_the_end_is_caught_and_named_by_element(run_plugin, pytester: pytest.Pytester) -> None:
    """`y[N + 4096] = ...` lies beyond a 1024-element guard; it must fail, naming element N + 4096."""
    result = run_plugin(CASES / "far_write", args=("-k", "correctness", "--dcuopt-examples=5"))
    result.assert_outcomes(passed=1, failed=1)
    found = re.findall(r"wrote past the end of buffer 'y' \((\d+) elements[^)]*\): element (\d+)", result.stdout.str())
    assert found, result.stdout.str()
    for count, element in found:
        assert int(element) == int(count) + 4096
    assert branches(state_of(pytester), "far_write")["writes_4096_past_end"]["correct"] is False
