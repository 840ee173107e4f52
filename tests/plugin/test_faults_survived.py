"""Faults survived, nothing left running, no wrong champion.

Black-box like test_correctness_checks.py: pytest runs in a subprocess on fixture cases from tests/data/cases, and the
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

from tests.conftest import CASES, FAST
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
        # A job a non-interactive shell starts in the background (CI runners do) inherits SIGINT ignored; the run
        # under test must see SIGINT as a terminal's Ctrl-C delivers it.
        return subprocess.Popen(command, cwd=pytester.path, env=env, stdout=output, stderr=subprocess.STDOUT,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


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
        status = run.wait(timeout=180)  # the full suite on a busy 2-core box is slow to tear a run down
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
        run.wait(timeout=30)
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


def test_junk_in_the_reply_channel_and_a_fork_before_a_crash_each_fail_their_branch_alone(
        run_plugin, pytester: pytest.Pytester) -> None:
    """Junk written into every inherited descriptor once crashed the plugin (OverflowError reading a 2**64-byte
    frame); a crash whose forked child still holds the reply pipe must be a crash, not a wait for the timeout."""
    result = run_plugin(CASES / "channel_junk", args=("--dcuopt-examples=3", "--dcuopt-timeout=20"))
    result.assert_outcomes(passed=2, failed=2, skipped=2)
    output = result.stdout.str()
    assert "INTERNALERROR" not in output and "did not return within" not in output
    result.stdout.fnmatch_lines(["*writes_junk_to_fds: the reply channel from its worker held bytes that are not a "
                                 "frame header*the kernel wrote into a file descriptor it did not open*"])
    result.stdout.fnmatch_lines(["*forks_then_crashes: the kernel's worker process died with signal SIGSEGV*"])
    found = branches(state_of(pytester), "channel_junk")
    assert found["baseline"]["correct"] is True and found["baseline"]["champion"] is True
    for name in ("writes_junk_to_fds", "forks_then_crashes"):
        assert found[name]["correct"] is False and found[name]["error"]["kind"] == "kernel crashed"


# ----- the worker's working directory -----------------------------------------------------------------------------
def test_a_kernel_runs_in_a_scratch_directory_and_leaves_the_project_untouched(
        pytester: pytest.Pytester, shared_build_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cwd_writer kernel deletes victim.txt and writes kernel_was_here.txt in its working directory on every
    call: pytest's directory and the case must keep the one and never get the other; the scratch folders are
    removed after."""
    log = pytester.path / "cwd.log"
    monkeypatch.setenv("DCUOPT_TEST_CWD_LOG", str(log))
    shutil.copytree(CASES / "cwd_writer", pytester.path / "cwd_writer")
    victims = [pytester.path / "victim.txt", pytester.path / "cwd_writer" / "victim.txt"]
    for victim in victims:
        victim.write_text("keep me")
    result = pytester.runpytest_subprocess("cwd_writer", f"--dcuopt-cache-dir={shared_build_cache}",
                                           f"--dcuopt-run-dir={pytester.path / 'run'}", *FAST, "--dcuopt-examples=3")
    result.assert_outcomes(passed=2)
    assert [victim.read_text() for victim in victims] == ["keep me", "keep me"]
    assert not list(pytester.path.rglob("kernel_was_here.txt"))
    places = set(log.read_text().split())
    assert places, "the kernel never logged where it ran"
    assert all(Path(place).name.startswith("dcuopt-worker-") for place in places), places
    assert not [place for place in places if Path(place).exists()], "a worker's scratch folder was left behind"


# ----- anti-cheat on timed calls ----------------------------------------------------------------------------------
def test_a_kernel_that_skips_work_when_its_output_is_filled_is_caught_and_never_crowned(
        run_plugin, pytester: pytest.Pytester) -> None:
    """`if (!isnan(y[0])) return;` passes every correctness call (outputs poisoned with NaN) and was crowned at
    5.13x; the checked calls among its timed calls must catch it."""
    result = run_plugin(CASES / "lazy_output", args=("--dcuopt-examples=5",))
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["FAILED *test_benchmark_cpu[[]skips_when_filled[]]*"])
    # Which checked call catches it depends on the run's secret seed (a timed call, or the call after the last one)
    result.stdout.fnmatch_lines(["*skips_when_filled: wrong outputs on *timed call*"])
    toolchain = state_of(pytester)["cases"]["lazy_output"]["toolchains"]["cpu"]
    lazy = toolchain["branches"]["skips_when_filled"]
    assert lazy["correct"] is False
    assert lazy["error"]["kind"] == "timed calls wrong"
    assert lazy["champion"] is False and toolchain["champion"] == "baseline"
    assert toolchain["branches"]["baseline"]["correct"] is True
    # before the first timed call, at least one timed call, after the last, and after the last on new input values
    assert toolchain["branches"]["baseline"]["timing"]["timed_calls_checked"] >= 4


@pytest.mark.parametrize("cheat", ["copies_kept_result", "skips_unchanged_output"])
def test_a_kernel_that_hands_back_a_kept_result_is_caught_on_new_inputs_and_never_crowned(
        run_plugin, pytester: pytest.Pytester, cheat: str) -> None:
    """Memoizing on the pointers, or returning when the output still holds what the last call wrote, passes every
    correctness call (outputs NaN-poisoned); a checked call of the timing (with junk outputs, a timed call checked at
    random with its inputs rotated, or the call on new input values) must catch it."""
    result = run_plugin(CASES / "kept_result", args=("-k", f"baseline or {cheat}", "--dcuopt-examples=5"))
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines([f"*{cheat}: wrong outputs on *call*", f"FAILED *test_benchmark_cpu[[]{cheat}[]]*"])
    toolchain = state_of(pytester)["cases"]["kept_result"]["toolchains"]["cpu"]
    cheater = toolchain["branches"][cheat]
    assert cheater["examples"] > 5  # its correctness test ran, and passed:
    assert cheater["failure"] is None or cheater["failure"].get("stage") != "correctness", cheater["failure"]
    assert cheater["correct"] is False and cheater["error"]["kind"] == "timed calls wrong"
    assert "call" in cheater["error"]["call"] and "Compute the full result" in cheater["error"]["message"]
    assert cheater["champion"] is False and toolchain["champion"] == "baseline"
    assert toolchain["branches"]["baseline"]["timing"]["timed_calls_checked"] >= 4


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


@skip_if_no_cuda_device
def test_work_left_running_on_a_non_blocking_stream_is_caught_and_never_crowned(
        run_plugin, pytester: pytest.Pytester) -> None:
    """other_stream: the non-blocking branch's events see none of its ~2 ms of work (it would time ~100x faster
    than the baseline); the blocking-stream control is timed right and not called out."""
    result = run_plugin(CASES / "other_stream", args=("--dcuopt-toolchain=cuda", "--dcuopt-examples=3"))
    result.assert_outcomes(passed=5, failed=1)
    result.stdout.fnmatch_lines(["*nonblocking_stream: work left running after its calls returned*",
                                 "FAILED *test_benchmark_cuda[[]nonblocking_stream[]]*"])
    toolchain = state_of(pytester)["cases"]["other_stream"]["toolchains"]["cuda"]
    leaves = toolchain["branches"]["nonblocking_stream"]
    assert leaves["error"]["kind"] == "work left running" and leaves["champion"] is False
    assert min(leaves["error"]["after_end_event"]["waits_us"]) > 1000  # most of the 2 ms busy wait
    assert toolchain["branches"]["blocking_stream"]["timing"]["after_end_event"]["verdict"] == "idle"
    assert toolchain["branches"]["baseline"]["timing"]["after_end_event"]["verdict"] == "idle"
    assert toolchain["champion"] in ("baseline", "blocking_stream")


@skip_if_no_cuda_device
def test_a_kernel_that_runs_the_gpu_out_of_memory_fails_alone(run_plugin, pytester: pytest.Pytester) -> None:
    """device_oom: a 4 TiB cudaMalloc in solve fails that branch, named, and nothing else."""
    result = run_plugin(CASES / "device_oom", args=("--dcuopt-toolchain=cuda", "-k", "correctness",
                                                    "--dcuopt-examples=3"))
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*huge_workspace*cudaErrorMemoryAllocation*out of memory*"])
    branches_ = state_of(pytester)["cases"]["device_oom"]["toolchains"]["cuda"]["branches"]
    assert branches_["baseline"]["correct"] is True
    assert branches_["huge_workspace"]["correct"] is False
    assert "less free memory than was asked for" in branches_["huge_workspace"]["failure"]["message"]


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
