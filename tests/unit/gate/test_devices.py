"""The device lock and GPU pinning helpers (run/devices.py), with real processes contending for real flocks."""
from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from pytest_dcuopt.run.devices import (
    HOST_LOCK,
    HOST_WORKERS_ENV,
    HOST_WORKERS_KEY,
    DeviceLockTimeout,
    cpu_share,
    device_lock,
    gpu_lock_name,
    lock_dir,
    note_host_workers,
    pin_for_worker,
    worker_number,
    workers_on_host,
)

HOLD = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from pytest_dcuopt.run.devices import device_lock
    with device_lock(sys.argv[1], directory=Path(sys.argv[2]), label="holder test") as hold:
        print("held", flush=True)
        time.sleep(float(sys.argv[3]))
""")


@contextmanager
def held_by_child(name: str, directory: Path, seconds: float) -> Iterator[subprocess.Popen[str]]:
    """Another process holding lock `name` for `seconds` (from the moment this yields)."""
    with subprocess.Popen([sys.executable, "-c", HOLD, name, str(directory), str(seconds)], stdout=subprocess.PIPE,
                          text=True) as child:
        assert child.stdout is not None and child.stdout.readline().strip() == "held"
        try:
            yield child
        finally:
            if child.poll() is None:
                child.kill()


def test_a_second_process_waits_and_the_record_says_for_whom(tmp_path: Path) -> None:
    with held_by_child("gpu-0", tmp_path, 0.6) as child:
        with device_lock("gpu-0", directory=tmp_path, label="me") as hold:
            pass
        assert hold.held and hold.waited_s >= 0.3, hold
        assert f"pid {child.pid}" in hold.waited_for and "holder test" in hold.waited_for
        assert hold.to_json()["path"] == str(tmp_path / "gpu-0.lock")


def test_an_uncontended_lock_is_held_at_once_and_other_devices_do_not_wait(tmp_path: Path) -> None:
    with held_by_child("gpu-0", tmp_path, 2.0), device_lock("gpu-1", directory=tmp_path) as hold:
        assert hold.held and hold.waited_s < 0.2 and hold.waited_for == ""


def test_a_timeout_names_the_holder(tmp_path: Path) -> None:
    with held_by_child(HOST_LOCK, tmp_path, 3.0) as child:
        with pytest.raises(DeviceLockTimeout, match=f"pid {child.pid}.*--dcuopt-devices"):
            with device_lock(HOST_LOCK, directory=tmp_path, timeout_s=0.2):
                pass


def test_a_killed_holder_leaves_no_stale_lock(tmp_path: Path) -> None:
    with held_by_child("gpu-0", tmp_path, 60.0) as child:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=10)
        with device_lock("gpu-0", directory=tmp_path, timeout_s=2.0) as hold:
            assert hold.held and hold.waited_s < 1.0


def test_a_turned_off_lock_says_so_in_the_record(tmp_path: Path) -> None:
    with device_lock(HOST_LOCK, enabled=False, directory=tmp_path, disabled_reason="--dcuopt-no-host-lock") as hold:
        assert hold.to_json() == {"name": HOST_LOCK, "path": None, "held": False, "waited_s": 0.0,
                                  "reason": "--dcuopt-no-host-lock"}
    assert not (tmp_path / f"{HOST_LOCK}.lock").exists()


WINDOWS = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from pytest_dcuopt.run.devices import device_lock
    spans = []
    for _ in range(6):
        with device_lock("gpu-0", directory=Path(sys.argv[1])):
            start = time.time(); time.sleep(0.03); spans.append((start, time.time()))
    print(json.dumps(spans))
""")


def test_two_sessions_never_hold_one_device_at_the_same_moment(tmp_path: Path) -> None:
    children = [subprocess.Popen([sys.executable, "-c", WINDOWS, str(tmp_path)], stdout=subprocess.PIPE, text=True)
                for _ in range(2)]
    spans = sorted(tuple(span) for child in children for span in json.loads(child.communicate(timeout=60)[0]))
    assert len(spans) == 12
    assert all(earlier[1] <= later[0] for earlier, later in itertools.pairwise(spans)), spans


def test_the_lock_dir_is_per_host_unless_overridden(tmp_path: Path) -> None:
    assert lock_dir({}).name == "pytest_dcuopt-locks"
    assert lock_dir({"DCUOPT_LOCK_DIR": str(tmp_path)}) == tmp_path


# ----- pinning -------------------------------------------------------------------------------------------------------
def test_xdist_workers_map_to_devices_round_robin() -> None:
    assert [worker_number(w) for w in ("gw0", "gw12", "master", None)] == [0, 12, None, None]
    pins = [pin_for_worker(("0", "1"), w, "nvidia") for w in ("gw0", "gw1", "gw2", None)]
    assert [(p.worker, p.device) for p in pins if p] == [("gw0", "0"), ("gw1", "1"), ("gw2", "0"), ("main", "0")]
    assert pin_for_worker((), "gw1", "nvidia") is None
    with pytest.raises(ValueError, match="nvidia or amd"):
        pin_for_worker(("0",), "gw0", "intel")


def test_a_pinned_environment_shows_one_gpu_and_nothing_that_remaps_it() -> None:
    base = {"PATH": "/bin", "CUDA_VISIBLE_DEVICES": "0,1,2,3", "HIP_VISIBLE_DEVICES": "2", "ROCR_VISIBLE_DEVICES": "1"}
    nvidia = pin_for_worker(("2", "3"), "gw1", "nvidia")
    assert nvidia is not None
    assert nvidia.environ(base) == {"PATH": "/bin", "CUDA_VISIBLE_DEVICES": "3", "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}
    amd = pin_for_worker(("2", "3"), "gw0", "amd")
    assert amd is not None
    assert amd.environ(base) == {"PATH": "/bin", "HIP_VISIBLE_DEVICES": "2"}
    assert amd.to_json() == {"worker": "gw0", "device": "2", "variable": "HIP_VISIBLE_DEVICES"}
    assert base["CUDA_VISIBLE_DEVICES"] == "0,1,2,3"  # the caller's environment is left alone


def test_a_started_process_sees_only_its_pinned_gpu() -> None:
    pin = pin_for_worker(("1",), "gw0", "nvidia")
    assert pin is not None
    seen = subprocess.run([sys.executable, "-c", "import os; print(os.environ['CUDA_VISIBLE_DEVICES'])"],
                          env=pin.environ(os.environ), capture_output=True, text=True, check=True).stdout.strip()
    assert seen == "1"


def test_the_gpu_lock_follows_the_physical_device() -> None:
    pin = pin_for_worker(("GPU-8f3a:1",), "gw0", "nvidia")
    assert gpu_lock_name(pin, "nvidia", {}) == "gpu-GPU-8f3a_1"
    assert gpu_lock_name(None, "nvidia", {"CUDA_VISIBLE_DEVICES": "3,1"}) == "gpu-3"
    assert gpu_lock_name(None, "amd", {}) == "gpu-0"


# ----- sharing the host's cores among xdist workers ------------------------------------------------------------------
def xdist_env(worker: str, count: int, **extra: str) -> dict[str, str]:
    return {"PYTEST_XDIST_WORKER": worker, "PYTEST_XDIST_WORKER_COUNT": str(count), **extra}


def test_outside_xdist_or_alone_a_worker_has_the_whole_host() -> None:
    assert cpu_share({}, cpus=2) is None
    assert cpu_share(xdist_env("gw0", 1), cpus=2) is None
    assert cpu_share(xdist_env("gw3", 4, **{HOST_WORKERS_ENV: "1"}), cpus=2) is None  # alone on its (remote) host


def test_two_workers_on_two_cores_take_one_core_and_one_compiler_each() -> None:
    share = cpu_share(xdist_env("gw1", 2), cpus=2)
    assert share is not None and (share.per_worker, share.build_jobs(2), share.build_jobs(8)) == (1, 1, 4)
    assert share.build_jobs(0) == 0  # --dcuopt-build-jobs 0 (no pre-build) stays off
    assert cpu_share(xdist_env("gw0", 3), cpus=2).per_worker == 1  # type: ignore[union-attr]  # never zero


def test_workers_start_their_builds_apart_and_each_still_builds_everything() -> None:
    items = list("abcdefg")
    orders = [cpu_share(xdist_env(f"gw{n}", 3), cpus=6).rotated(items) for n in range(3)]  # type: ignore[union-attr]
    assert [order[0] for order in orders] == ["a", "c", "e"]
    assert all(sorted(order) == items for order in orders)


def test_remote_workers_count_per_host() -> None:
    execnet = pytest.importorskip("execnet")
    specs = [execnet.XSpec(text) for text in ("popen", "popen", "ssh=gpu1", "socket=10.0.0.2:8888",
                                              "socket=10.0.0.2:8889", "popen//via=proxy", "popen//chdir=/x")]
    assert [workers_on_host(specs, spec) for spec in specs] == [3, 3, 1, 2, 2, 1, 3]
    environ: dict[str, str] = {}
    note_host_workers({HOST_WORKERS_KEY: 2}, environ)
    note_host_workers({}, environ)  # an older controller sends nothing: the count stays
    assert environ == {HOST_WORKERS_ENV: "2"}


def test_a_worker_caps_torch_threads_in_its_own_process_only() -> None:
    pytest.importorskip("torch")
    script = ("import torch; from pytest_dcuopt.run.devices import cpu_share, limit_harness_threads; "
              "torch.set_num_threads(4); print(limit_harness_threads(cpu_share(cpus=4)), torch.get_num_threads())")
    env = {**os.environ, **xdist_env("gw1", 2)}
    env.pop(HOST_WORKERS_ENV, None)
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["2", "2"]
