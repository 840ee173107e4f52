"""The spare worker (run/spare_workers.py): a worker process started ahead, taken by the next start that fits, ended
when it does not fit. Real worker processes and a real CPU kernel; the "heavy" module a spare imports ahead is a small
module written here whose import takes a known time."""
from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from pytest_dcuopt.case.cabi import Param, parse_solve_signature
from pytest_dcuopt.run.isolation import IsolatedKernel, WorkerSpec
from pytest_dcuopt.run.launch import Launched, calling_thread, end_worker_processes, launch_worker, worker_environ
from pytest_dcuopt.run.spare_workers import SpareWorkers, StartKey, default_count, ping, quiet_needed
from pytest_dcuopt.run.worker import import_ahead
from pytest_dcuopt.toolchains import make_toolchain
from pytest_dcuopt.toolchains.base import Artifact
from pytest_dcuopt.toolchains.binding import BindSpec, draw_inputs
from pytest_dcuopt.toolchains.cache import BuildCache

COPY = 'extern "C" void solve(const float* x, float* y, int N) { for (int i = 0; i < N; ++i) y[i] = x[i]; }\n'
SLOW_IMPORT_S = 1.0


@pytest.fixture(scope="module")
def copy_kernel(tmp_path_factory: pytest.TempPathFactory) -> tuple[Artifact, tuple[Param, ...]]:
    folder = tmp_path_factory.mktemp("copy_kernel")
    source = folder / "kernel.cpp"
    source.write_text(COPY)
    return make_toolchain("cpu").build(source, BuildCache(folder / "cache")), parse_solve_signature(COPY, str(source))


@pytest.fixture
def slow_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A module whose import sleeps SLOW_IMPORT_S (standing in for torch's 1-5 s), importable by the workers."""
    (tmp_path / "slow_to_import.py").write_text(f"import time\ntime.sleep({SLOW_IMPORT_S})\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])))
    return "slow_to_import"


def spec_for(kernel: tuple[Artifact, tuple[Param, ...]], log: Path, preload: tuple[str, ...]) -> WorkerSpec:
    artifact, params = kernel
    return WorkerSpec("copy/cpu/b", "cpu", None, (), artifact, params, log, preload=preload)


def key_now(preload: tuple[str, ...]) -> StartKey:
    """The key IsolatedKernel computes for a start from here with these modules."""
    return StartKey.of(worker_environ(os.environ, os.getcwd()), calling_thread(), preload)


def end_launched(launched: Launched) -> None:
    """End a worker this test started itself (not through IsolatedKernel) and remove its scratch folder."""
    end_worker_processes(launched.proc.pid, launched.token)
    launched.proc.wait(timeout=10)
    assert launched.proc.stdin is not None
    launched.proc.stdin.close()
    launched.responses.close()
    shutil.rmtree(launched.scratch, ignore_errors=True)


def copies_correctly(worker: IsolatedKernel, params: tuple[Param, ...]) -> bool:
    spec = BindSpec({"N": 16}, 3, {"x": (16,), "y": (16,)})
    snapshot = worker.request("run", spec=spec)  # the worker sends no inputs: the pytest process draws them
    return bool(np.array_equal(snapshot.outputs["y"], draw_inputs(params, spec)["x"]))


def test_only_host_kernels_and_small_hosts_wait_for_a_spare_before_timing() -> None:
    assert quiet_needed(None, cores=64)
    assert quiet_needed("nvidia", cores=2)
    assert not quiet_needed("nvidia", cores=16)
    assert not quiet_needed("amd", cores=4)


def test_a_key_is_the_environment_thread_and_modules_not_their_order() -> None:
    one = StartKey.of({"A": "1", "B": "2"}, "main-thread", ("torch",))
    assert one == StartKey.of({"B": "2", "A": "1"}, "main-thread", ("torch",))
    assert one != StartKey.of({"A": "1", "B": "3"}, "main-thread", ("torch",))
    assert one != StartKey.of({"A": "1", "B": "2"}, "other-thread", ("torch",))
    assert one != StartKey.of({"A": "1", "B": "2"}, "main-thread", ())


def test_the_worker_environment_leaves_out_the_current_test() -> None:
    """pytest sets PYTEST_CURRENT_TEST per test: kept, no start would ever match a spare started in another test."""
    environ = worker_environ({"PYTEST_CURRENT_TEST": "a.py::t (call)", "KEEP": "1"}, "/project")
    assert "PYTEST_CURRENT_TEST" not in environ and environ["KEEP"] == "1"


def test_importing_ahead_skips_what_cannot_be_imported() -> None:
    """The `load` request imports it again and reports the real error there."""
    assert import_ahead(["json", "no_such_module_for_dcuopt_tests", "decimal"]) == ["json", "decimal"]


def test_a_start_takes_the_spare_that_fits_and_offers_the_next(copy_kernel, tmp_path: Path, slow_module: str) -> None:
    preload = (slow_module,)
    spares = SpareWorkers(tmp_path / "logs")
    spares.offer(key_now(preload))
    [spare] = spares._spares
    spare_pid = spare.launched.proc.pid
    time.sleep(SLOW_IMPORT_S + 0.5)  # the spare imports while "another branch runs its tests"
    log = tmp_path / "logs" / "copy.log"
    worker = IsolatedKernel(spec_for(copy_kernel, log, preload), timeout_s=30, spares=spares)
    try:
        assert copies_correctly(worker, copy_kernel[1])
        assert worker._proc is not None and worker._proc.pid == spare_pid
        assert worker.started["spare"] is True
        assert worker.started["seconds"] < SLOW_IMPORT_S  # its import was done: only the kernel's load was left
        assert worker.placement()["worker_start"] == worker.started
        assert log.exists() and not spare.log.exists()  # the spare's log became the branch's
        assert spares.taken == 1
        [following] = spares._spares
        assert following.launched.proc.pid != spare_pid  # offered after the load
    finally:
        worker.close()
        spares.close()
    assert following.launched.proc.poll() is not None
    assert not following.launched.scratch.exists() and not following.log.exists()


def test_a_spare_that_does_not_fit_is_ended_and_the_start_is_cold(copy_kernel, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    spares = SpareWorkers(tmp_path / "logs")
    spares.offer(key_now(()))
    [spare] = spares._spares
    monkeypatch.setenv("DCUOPT_TEST_CHANGED_SINCE_THE_SPARE", "1")  # the worker would start with another environment
    worker = IsolatedKernel(spec_for(copy_kernel, tmp_path / "copy.log", ()), timeout_s=30, spares=spares)
    try:
        assert copies_correctly(worker, copy_kernel[1])
        assert worker.started["spare"] is False
        assert worker._proc is not None and worker._proc.pid != spare.launched.proc.pid
        assert spare.launched.proc.poll() is not None  # ended, not left running
        assert not spare.launched.scratch.exists() and not spare.log.exists()
        assert (spares.taken, spares.discarded) == (0, 1)
    finally:
        worker.close()
        spares.close()


def test_settling_waits_for_the_spares_imports(tmp_path: Path, slow_module: str) -> None:
    spares = SpareWorkers(tmp_path / "logs")
    began = time.perf_counter()
    spares.offer(key_now((slow_module,)))
    spares.settle(timeout_s=30)
    assert time.perf_counter() - began >= SLOW_IMPORT_S
    [spare] = spares._spares
    assert spare.settled
    began = time.perf_counter()
    spares.settle(timeout_s=30)  # once settled, settling again costs nothing
    assert time.perf_counter() - began < 0.05
    spares.close()
    assert spare.launched.proc.poll() is not None


def test_a_dead_spare_is_not_taken(copy_kernel, tmp_path: Path) -> None:
    spares = SpareWorkers(tmp_path / "logs")
    key = key_now(())
    spares.offer(key)
    [spare] = spares._spares
    spare.launched.proc.kill()
    spare.launched.proc.wait()
    assert spares.take(key, tmp_path / "branch.log") is None
    assert spares.discarded == 1 and not (tmp_path / "branch.log").exists()


def test_spares_off_start_nothing(tmp_path: Path) -> None:
    spares = SpareWorkers(tmp_path / "logs", count=0)
    spares.offer(key_now(()))
    assert spares._spares == [] and spares.take(key_now(()), tmp_path / "x.log") is None


def test_several_spares_are_taken_oldest_first_and_a_new_key_ends_the_others(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    spares = SpareWorkers(tmp_path / "logs", count=2)
    key = key_now(())
    spares.offer(key)
    first, second = (spare.launched.proc.pid for spare in spares._spares)
    spares.offer(key)  # already full: nothing more starts
    assert [spare.launched.proc.pid for spare in spares._spares] == [first, second]
    taken = spares.take(key, tmp_path / "a.log")
    assert taken is not None and taken.proc.pid == first
    spares.offer(key)  # refilled behind the second
    assert len(spares._spares) == 2 and spares._spares[0].launched.proc.pid == second
    kept = list(spares._spares)
    monkeypatch.setenv("DCUOPT_TEST_ANOTHER_KIND_OF_WORKER", "1")
    spares.offer(key_now(()))  # the last start had another key: the spares for the old one would never be taken
    assert all(spare.launched.proc.poll() is not None for spare in kept)
    assert len(spares._spares) == 2 and spares.discarded == 2
    spares.close()
    end_launched(taken)  # the taken one is the caller's to end


def test_the_default_is_two_spares_on_four_cores_or_more() -> None:
    assert (default_count(2), default_count(4), default_count(64)) == (1, 2, 2)


def test_a_worker_answers_a_ping_after_its_imports(tmp_path: Path, slow_module: str) -> None:
    launched = launch_worker(worker_environ(os.environ, os.getcwd()), tmp_path / "w.log", "ping", (slow_module,))
    try:
        began = time.perf_counter()
        assert ping(launched, timeout_s=30)
        assert time.perf_counter() - began >= SLOW_IMPORT_S * 0.8
        began = time.perf_counter()
        assert ping(launched, timeout_s=30)  # answered again, at once: the imports are done
        assert time.perf_counter() - began < SLOW_IMPORT_S / 2
    finally:
        end_launched(launched)


def test_the_worker_command_line_carries_the_modules(tmp_path: Path) -> None:
    launched = launch_worker(worker_environ(os.environ, os.getcwd()), tmp_path / "w.log", "argv", ("json", "decimal"))
    try:
        deadline, command = time.monotonic() + 10, [b""]
        while b"pytest_dcuopt.run.worker" not in command and time.monotonic() < deadline:  # until it has exec'd
            command = Path(f"/proc/{launched.proc.pid}/cmdline").read_bytes().split(b"\0")
            time.sleep(0.01)
        assert command[:3] == [sys.executable.encode(), b"-m", b"pytest_dcuopt.run.worker"]
        assert command[6] == b"json,decimal"
    finally:
        end_launched(launched)
