"""The device lock and GPU pinning, wired in: kernel workers start pinned (run/isolation.py), timing holds the
worker's lock and records it (bench/run.py), and the A/B loop takes it once. Real kernels, real worker processes,
real flocks (in a private lock directory, so other pytest sessions on this host are neither waited on nor held up).
"""
from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from pytest_dcuopt.bench.run import held_locks, interleave_with_baseline, measure
from pytest_dcuopt.case.cabi import Param, parse_solve_signature
from pytest_dcuopt.case.model import Branch, load_case
from pytest_dcuopt.check.checked_calls import TIMING_REPLY_CHECK
from pytest_dcuopt.check.verdicts import verified_default
from pytest_dcuopt.report.records import BranchRecord
from pytest_dcuopt.run.devices import HOST_LOCK, LOCK_DIR_ENV, NestedDeviceLock
from pytest_dcuopt.run.isolation import IsolatedKernel, WorkerSpec
from pytest_dcuopt.timing.policy import TimingPolicy
from pytest_dcuopt.toolchains import make_toolchain
from pytest_dcuopt.toolchains.base import Artifact
from pytest_dcuopt.toolchains.binding import BindSpec
from pytest_dcuopt.toolchains.cache import BuildCache
from pytest_dcuopt.variant import BuildSettings, Variant, resolve
from tests.conftest import CASES

# Writes what the kernel's own process sees: y = [CUDA_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES, CUDA_DEVICE_ORDER is
# PCI_BUS_ID] (-1: unset).
ENV_KERNEL = textwrap.dedent("""
    #include <stdlib.h>
    #include <string.h>
    extern "C" void solve(float* y, int N) {
        const char* cuda = getenv("CUDA_VISIBLE_DEVICES");
        const char* hip = getenv("HIP_VISIBLE_DEVICES");
        const char* order = getenv("CUDA_DEVICE_ORDER");
        y[0] = cuda ? (float)atof(cuda) : -1.0f;
        y[1] = hip ? (float)atof(hip) : -1.0f;
        y[2] = order ? (strcmp(order, "PCI_BUS_ID") == 0 ? 1.0f : 0.0f) : -1.0f;
    }
""")
QUICK = TimingPolicy(warmup_s=0.01, min_samples=3, min_time_s=0.0, max_time_s=0.1)
EnvKernel = tuple[Artifact, tuple[Param, ...]]
HOLD = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from pytest_dcuopt.run.devices import device_lock
    with device_lock(sys.argv[1], directory=Path(sys.argv[2]), label="the other session"):
        print("held", flush=True)
        time.sleep(float(sys.argv[3]))
""")


@pytest.fixture
def lock_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "locks"
    monkeypatch.setenv(LOCK_DIR_ENV, str(folder))
    return folder


@pytest.fixture(scope="module")
def env_artifact(tmp_path_factory: pytest.TempPathFactory) -> EnvKernel:
    folder = tmp_path_factory.mktemp("env_kernel")
    source = folder / "kernel.cpp"
    source.write_text(ENV_KERNEL)
    artifact = make_toolchain("cpu").build(source, BuildCache(folder / "cache"))
    return artifact, parse_solve_signature(ENV_KERNEL, str(source))


def seen_by_kernel(env_artifact: EnvKernel, tmp_path: Path, platform: str | None,
                   devices: tuple[str, ...]) -> tuple[list[float], IsolatedKernel]:
    """Start a real kernel worker as run/isolation.py does and return what its process's environment held."""
    artifact, params = env_artifact
    spec = WorkerSpec("env/cpu/baseline", "cpu", None, (), artifact, params, tmp_path / "worker.log",
                      devices=devices, platform=platform)
    worker = IsolatedKernel(spec, timeout_s=30)
    try:
        snapshot = worker.request("run", spec=BindSpec({"N": 3}, 0, {"y": (3,)}))
    finally:
        worker.close()
    return [float(v) for v in snapshot.outputs["y"]], worker


@pytest.mark.parametrize(("worker_id", "device"), [("gw0", 0.0), ("gw1", 1.0), ("gw2", 0.0)])
def test_each_xdist_worker_starts_its_kernel_worker_on_its_own_nvidia_gpu(
        env_artifact: EnvKernel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, worker_id: str,
        device: float) -> None:
    monkeypatch.setenv("PYTEST_XDIST_WORKER", worker_id)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "7")  # the pin replaces it
    monkeypatch.setenv("HIP_VISIBLE_DEVICES", "5")  # would be applied on top of it: removed
    monkeypatch.delenv("CUDA_DEVICE_ORDER", raising=False)
    seen, worker = seen_by_kernel(env_artifact, tmp_path, "nvidia", ("0", "1"))
    assert seen == [device, -1.0, 1.0]
    physical = str(int(device))
    assert worker.device["pin"] == {"worker": worker_id, "device": physical, "variable": "CUDA_VISIBLE_DEVICES"}
    assert worker.lock.name == f"gpu-{physical}" and worker.lock.enabled


def test_an_amd_worker_is_pinned_with_hip_visible_devices_alone(
        env_artifact: EnvKernel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "7")  # HIP honours it too: removed, so index 3 means GPU 3
    seen, worker = seen_by_kernel(env_artifact, tmp_path, "amd", ("2", "3"))
    assert seen[:2] == [-1.0, 3.0]
    assert worker.device["pin"]["variable"] == "HIP_VISIBLE_DEVICES" and worker.lock.name == "gpu-3"


def test_without_devices_or_on_the_host_nothing_is_pinned(
        env_artifact: EnvKernel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "7")
    monkeypatch.delenv("HIP_VISIBLE_DEVICES", raising=False)
    seen, gpu = seen_by_kernel(env_artifact, tmp_path, "nvidia", ())
    assert seen[:2] == [7.0, -1.0] and "pin" not in gpu.device
    assert gpu.lock.name == "gpu-7"  # the GPU the runtime will use: the first visible one
    seen, host = seen_by_kernel(env_artifact, tmp_path, None, ("0", "1"))
    assert seen[:2] == [7.0, -1.0] and "pin" not in host.device
    assert host.lock.name == HOST_LOCK


def test_toolchains_name_their_platform() -> None:
    assert make_toolchain("cuda").device_platform() == "nvidia"
    assert make_toolchain("hip").device_platform() == "amd"
    assert make_toolchain("cpu").device_platform() is None
    assert make_toolchain("python").device_platform() is None


# ----- the lock around timing -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> BuildSettings:
    folder = tmp_path_factory.mktemp("wiring")
    return BuildSettings(BuildCache(folder / "cache"), None, (), folder / "logs", 60.0)


def variant_of(branch: str, settings: BuildSettings) -> Variant:
    case = load_case(CASES / "xdist_merge")  # baseline and drops_tail: both right at the default dims, timed there
    source = case.root / "kernel.cpp" if branch == "baseline" else case.root / "branches" / branch / "kernel.cpp"
    variant = Variant(case.for_toolchain("cpu"), make_toolchain("cpu"), Branch(branch, source),
                      BranchRecord(case.name, "cpu", branch, str(source)))
    resolve(variant, settings)
    assert variant.worker is not None, variant.setup_error
    return variant


def close(*variants: Variant) -> None:
    for variant in variants:
        if variant.worker is not None:
            variant.worker.close()


def test_timing_waits_for_the_host_lock_and_records_the_hold(built: BuildSettings, lock_dir: Path) -> None:
    variant = variant_of("baseline", built)
    try:
        with subprocess.Popen([sys.executable, "-c", HOLD, HOST_LOCK, str(lock_dir), "0.6"], stdout=subprocess.PIPE,
                              text=True) as other:
            assert other.stdout is not None and other.stdout.readline().strip() == "held"
            asked = time.time()
            lock = measure(variant, TIMING_REPLY_CHECK, QUICK, 30)["device_lock"]
        assert lock["held"] and lock["name"] == HOST_LOCK and lock["path"] == str(lock_dir / "host-cpu.lock")
        assert lock["waited_s"] >= 0.3 and f"pid {other.pid}" in lock["waited_for"]
        assert asked < lock["acquired_at"] < lock["released_at"] <= time.time()
        assert lock["held_s"] == pytest.approx(lock["released_at"] - lock["acquired_at"], abs=1e-3)
    finally:
        close(variant)


def test_no_host_lock_times_without_it_and_says_so(built: BuildSettings, lock_dir: Path) -> None:
    settings = BuildSettings(built.cache, None, (), built.log_dir, 60.0, host_lock=False)
    variant = variant_of("baseline", settings)
    try:
        with subprocess.Popen([sys.executable, "-c", HOLD, HOST_LOCK, str(lock_dir), "5"], stdout=subprocess.PIPE,
                              text=True) as other:
            assert other.stdout is not None and other.stdout.readline().strip() == "held"
            lock = measure(variant, TIMING_REPLY_CHECK, QUICK, 30)["device_lock"]  # would wait 5 s if it took the lock
            other.kill()
        assert lock["held"] is False and "--dcuopt-no-host-lock" in lock["reason"] and lock["waited_s"] == 0
    finally:
        close(variant)


def test_the_ab_loop_holds_the_lock_once_and_never_asks_for_it_again(built: BuildSettings, lock_dir: Path) -> None:
    baseline, branch = variant_of("baseline", built), variant_of("drops_tail", built)
    try:
        verified_default(baseline)
        with held_locks(branch), pytest.raises(NestedDeviceLock, match="already held by this process"):
            # what a nested acquisition would do, instead of waiting for ever
            measure(branch, TIMING_REPLY_CHECK, QUICK, 30)
        branch.record.timing = {}
        started = time.time()
        interleaved = interleave_with_baseline(branch, baseline, TIMING_REPLY_CHECK, 2, QUICK, 30)
        assert interleaved is not None
        lock = interleaved["device_lock"]
        assert lock["held"] and lock["name"] == HOST_LOCK and started <= lock["acquired_at"]
        assert interleaved["samples"][0] >= 2 * QUICK.min_samples  # both rounds ran inside the one hold
    finally:
        close(baseline, branch)

