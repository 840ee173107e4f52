"""Exclusive timing per device, and GPU pinning of xdist workers (docs/gating.md, "Parallel sweeps").

* `device_lock(name)`: an flock on `<lock dir>/<name>.lock`, held while a branch is timed, so no two measurements
  run on one device at once, whether they come from xdist workers of one session or from other pytest sessions on
  the host. flock belongs to the open file: the kernel releases it when the holder exits or is killed, so a dead
  session never leaves a stale lock. The lock directory is per host and shared by every user (a GPU is too).
* `device_lock(name, shared=True)`: the same lock, shared (`shared_use`): held around other work on the device (a
  checked call: the kernel's run, the reference, the compare), so that such work of other processes runs side by
  side but never beside a timing, and a timing waits for the calls in flight.
* `pin_for_worker(devices, worker_id, platform)`: the GPU an xdist worker's kernel processes use and the environment
  they start with. The visibility variables are read once, when the runtime initializes, so they must be in the
  kernel worker's environment when it starts (run/isolation.py), never set afterwards.
* `timing_lock(pin, platform, host_lock)`: which lock guards a kernel worker's measurements (its GPU, or the host);
  bench/run.py holds it around every timed request.
"""
from __future__ import annotations

import fcntl
import os
import re
import socket
import tempfile
import time
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LOCK_DIR_ENV = "DCUOPT_LOCK_DIR"
HOST_LOCK = "host-cpu"  # CPU timing: the host's cores and memory bandwidth are the shared device
# Which variable selects the GPUs a runtime sees, per platform (a DCU runs HIP on ROCm: "amd").
VISIBILITY = {"nvidia": "CUDA_VISIBLE_DEVICES", "amd": "HIP_VISIBLE_DEVICES"}
# Variables that would be applied on top of the pinned one and change what its index means (HIP also honours
# CUDA_VISIBLE_DEVICES, ROCm applies ROCR_VISIBLE_DEVICES below HIP): removed from a pinned worker's environment.
OTHER_VISIBILITY = {"nvidia": ("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"),
                    "amd": ("CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL")}


class DeviceLockTimeout(TimeoutError):
    """The device stayed locked by someone else for longer than the caller would wait."""


class NestedDeviceLock(RuntimeError):
    """This process asked for a lock it already holds: flock on a second open file of it would wait for ever."""


# Lock files this process holds now: a second acquisition of one of them is refused instead of hanging.
_HELD_HERE: set[str] = set()
# What a waiter reads when the lock is taken but names no exclusive holder: shared holders (shared_use).
SHARED_HOLDERS = "checked calls on this device (shared)"
# Another session's sweep may hold the device this long; past it the test fails naming the holder (never a hang).
LOCK_WAIT_S = 3600.0


def lock_dir(environ: Mapping[str, str] = os.environ) -> Path:
    """$DCUOPT_LOCK_DIR, else <tmp>/pytest_dcuopt-locks: one per host, shared by all users and sessions (not
    $XDG_RUNTIME_DIR, which is per user: two users timing on one GPU must see each other's lock)."""
    return Path(environ.get(LOCK_DIR_ENV) or Path(tempfile.gettempdir()) / "pytest_dcuopt-locks")


def lock_name(kind: str, device: str) -> str:
    """A file-name-safe lock name, e.g. gpu-0, gpu-GPU-8f3a..., host-cpu."""
    return _safe(f"{kind}-{device}")


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


@dataclass
class LockHold:
    """What the timing record says about the lock: which, whether it was held, how long the wait and the hold were,
    and when (wall clock, so holds recorded by different processes can be compared)."""

    name: str
    path: str | None
    held: bool
    waited_s: float = 0.0
    reason: str = ""  # why it was not held (turned off)
    waited_for: str = ""  # the holder's note when this measurement had to wait
    acquired_at: float | None = None  # time.time() right after the flock was taken
    released_at: float | None = None  # time.time() right before it was released

    @property
    def held_s(self) -> float | None:
        if self.acquired_at is None or self.released_at is None:
            return None
        return self.released_at - self.acquired_at

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"name": self.name, "path": self.path, "held": self.held,
                                "waited_s": round(self.waited_s, 4)}
        if self.held_s is not None:
            data.update(held_s=round(self.held_s, 4), acquired_at=round(self.acquired_at or 0.0, 6),
                        released_at=round(self.released_at or 0.0, 6))
        if self.reason:
            data["reason"] = self.reason
        if self.waited_for:
            data["waited_for"] = self.waited_for
        return data


@contextmanager
def device_lock(name: str, *, enabled: bool = True, label: str = "", timeout_s: float | None = None,
                directory: Path | None = None, disabled_reason: str = "turned off",
                poll_s: float = 0.005, shared: bool = False) -> Iterator[LockHold]:
    """Hold the host-wide lock `name` for the duration of the block (yields the LockHold for the record).

    Waits as long as it takes, or raises DeviceLockTimeout after `timeout_s` naming the holder. `enabled=False`
    yields a hold with `held=False` and the reason, so the record says the measurement was not exclusive. Asking
    for a lock this process already holds raises NestedDeviceLock (an flock would wait on its own holder for ever).
    `shared=True` takes it shared: other shared holders at the same time, no exclusive one (a timing).
    """
    if not enabled:
        yield LockHold(name, None, held=False, reason=disabled_reason)
        return
    path = _lock_file(directory or lock_dir(), name)
    key = str(path.resolve())
    if key in _HELD_HERE:
        raise NestedDeviceLock(f"{path} is already held by this process (pid {os.getpid()}), and a second flock on "
                               "it would wait for ever; time the inner measurement without taking the lock again "
                               "(bench.run.measure(..., lock=False) inside a held lock)")
    fd = _open_lock(path)
    turn = _open_lock(path.with_name(path.name + ".turn"))
    try:
        started = time.perf_counter()
        # Fairness: a waiter holds the turnstile while it waits for the lock, so a holder that releases the lock and
        # asks again at once (back-to-back measurements) queues behind it instead of taking the lock straight back.
        _acquire(turn, path, timeout_s, poll_s, started)
        try:
            waited_for = _acquire(fd, path, timeout_s, poll_s, started, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        finally:
            fcntl.flock(turn, fcntl.LOCK_UN)
        hold = LockHold(name, str(path), held=True, waited_s=time.perf_counter() - started, waited_for=waited_for,
                        acquired_at=time.time())
        _HELD_HERE.add(key)
        if not shared:  # shared holders leave the note alone: it names the exclusive holder, or nobody
            _write_holder(fd, label)
        try:
            yield hold
        finally:
            hold.released_at = time.time()
            _HELD_HERE.discard(key)
            if not shared:
                _clear_holder(fd)  # released: a waiter blocked by shared holders must not read this note
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
        os.close(turn)


def held_by_this_process(name: str, directory: Path | None = None) -> bool:
    """Whether this process holds the lock `name` now (`device_lock` would refuse to take it again)."""
    return str(((directory or lock_dir()) / f"{_safe(name)}.lock").resolve()) in _HELD_HERE


def _lock_file(directory: Path, name: str) -> Path:
    if not directory.is_dir():
        directory.mkdir(parents=True, exist_ok=True)
        try:
            directory.chmod(0o1777)  # like /tmp: every user may add a lock, none may remove another's
        except OSError:
            pass  # created by another user meanwhile: theirs to set
    return directory / f"{_safe(name)}.lock"


def _open_lock(path: Path) -> int:
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except PermissionError:
        return os.open(path, os.O_RDONLY)  # another user's lock file: flock works on a read-only descriptor too
    try:
        os.fchmod(fd, 0o666)  # the umask took bits off: other users must open it too
    except OSError:
        pass  # not ours to change
    return fd


def _acquire(fd: int, path: Path, timeout_s: float | None, poll_s: float, started: float,
             mode: int = fcntl.LOCK_EX) -> str:
    """Take the flock (`mode`: LOCK_EX or LOCK_SH); returns the holder's note when it had to wait ("" when the lock
    was free)."""
    try:
        fcntl.flock(fd, mode | fcntl.LOCK_NB)
        return ""
    except BlockingIOError:
        waited_for = _read_holder(path) or SHARED_HOLDERS
    if timeout_s is None:
        fcntl.flock(fd, mode)
        return waited_for
    while True:
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
            return waited_for
        except BlockingIOError:
            if time.perf_counter() - started >= timeout_s:
                raise DeviceLockTimeout(
                    f"{path} stayed locked for {timeout_s:g} s by {_read_holder(path) or 'an unknown holder'}: "
                    "another measurement holds this device. Wait for it, or time on another device "
                    "(--dcuopt-devices)") from None
            time.sleep(poll_s)
            poll_s = min(poll_s * 2, 0.05)


def _write_holder(fd: int, label: str) -> None:
    """Who holds the lock, for anyone waiting on it (best effort: a read-only descriptor cannot write)."""
    note = f"pid {os.getpid()} on {socket.gethostname()}" + (f" timing {label}" if label else "")
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, note.encode(), 0)
    except OSError:
        pass


def _clear_holder(fd: int) -> None:
    try:
        os.ftruncate(fd, 0)
    except OSError:
        pass


def _read_holder(path: Path) -> str:
    try:
        return path.read_text(errors="replace").strip()
    except OSError:
        return ""


# ----- pinning xdist workers to GPUs ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class DevicePin:
    """The GPU one pytest process (an xdist worker, or the only one) starts its kernel workers on."""

    worker: str  # xdist worker id (gw0, gw1, ...) or "main"
    device: str  # as nvidia-smi / rocm-smi number it, or a UUID
    platform: str  # nvidia or amd

    @property
    def variable(self) -> str:
        return VISIBILITY[self.platform]

    @property
    def lock(self) -> str:
        """The device lock's name: one per physical GPU."""
        return lock_name("gpu", self.device)

    def environ(self, base: Mapping[str, str]) -> dict[str, str]:
        """`base` with this GPU as the only visible one (index 0 in the kernel worker)."""
        env = {k: v for k, v in base.items() if k not in OTHER_VISIBILITY[self.platform]}
        env[self.variable] = self.device
        if self.platform == "nvidia":
            env.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")  # indices as nvidia-smi prints them
        return env

    def to_json(self) -> dict[str, Any]:
        return {"worker": self.worker, "device": self.device, "variable": self.variable}


def worker_number(worker_id: str | None) -> int | None:
    """gw3 -> 3; None (no xdist) or `master` -> None."""
    match = re.fullmatch(r"gw(\d+)", worker_id or "")
    return int(match.group(1)) if match else None


def pin_for_worker(devices: Sequence[str], worker_id: str | None, platform: str) -> DevicePin | None:
    """The pin of xdist worker `worker_id` (gwN takes devices[N % len(devices)]); None without --dcuopt-devices.

    More workers than devices share a device round robin; the device lock keeps their measurements apart.
    """
    if not devices:
        return None
    if platform not in VISIBILITY:
        raise ValueError(f"unknown GPU platform {platform!r}: nvidia or amd (a DCU is amd: it runs HIP on ROCm)")
    number = worker_number(worker_id)
    device = devices[(number or 0) % len(devices)]
    return DevicePin(f"gw{number}" if number is not None else "main", device, platform)


def xdist_worker_id(environ: Mapping[str, str] = os.environ) -> str | None:
    """This process's xdist worker id (gw0, gw1, ...), None outside xdist workers."""
    return environ.get("PYTEST_XDIST_WORKER")


def gpu_lock_name(pin: DevicePin | None, platform: str, environ: Mapping[str, str] = os.environ) -> str:
    """The lock of the GPU a kernel worker will use: the pinned one, else the first the environment makes visible
    (device 0 of the runtime), else physical device 0."""
    if pin is not None:
        return pin.lock
    visible = environ.get(VISIBILITY.get(platform, "CUDA_VISIBLE_DEVICES"), "")
    first = visible.split(",")[0].strip()
    return lock_name("gpu", first or "0")


# ----- which lock guards a kernel worker's measurements --------------------------------------------------------------
NO_HOST_LOCK_REASON = "--dcuopt-no-host-lock: CPU branches may be timed while others run"


@dataclass(frozen=True)
class TimingLock:
    """The lock that makes a kernel worker's measurements exclusive, and whether it is taken."""

    name: str
    enabled: bool = True
    disabled_reason: str = ""


def timing_lock(pin: DevicePin | None, platform: str | None, host_lock: bool,
                environ: Mapping[str, str] = os.environ) -> TimingLock:
    """A GPU kernel's physical GPU (always locked); a host kernel (platform None) the host, unless turned off."""
    if platform is None:
        return TimingLock(HOST_LOCK, host_lock, "" if host_lock else NO_HOST_LOCK_REASON)
    return TimingLock(gpu_lock_name(pin, platform, environ))


@contextmanager
def shared_use(lock: TimingLock, label: str = "") -> Iterator[None]:
    """Hold `lock` shared for the block: work on the device that is not a timing (a checked call) runs beside other
    such work of other processes, never beside their timings. Nothing is taken when the lock is turned off or this
    process holds it already (a checked call inside a timing's hold, a reference inside a checked call)."""
    if not lock.enabled or held_by_this_process(lock.name):
        yield
        return
    with device_lock(lock.name, label=label, timeout_s=LOCK_WAIT_S, shared=True):
        yield


# ----- sharing the host's cores among xdist workers ------------------------------------------------------------------
@dataclass(frozen=True)
class CpuShare:
    """The cores one xdist worker's own work (builds, reference outputs) may use: the host's, split evenly.

    Without it every worker sizes its build pool and torch's thread pool for the whole host: with `-n 2` on two
    cores, four threads of OpenMP-spinning torch reductions and four build threads compete for two cores. The kernel
    workers' environment is left alone: an OpenMP kernel is timed under the lock with every core, as in `-n 0`.
    """

    cpus: int
    workers: int
    worker: int

    @property
    def per_worker(self) -> int:
        return max(1, self.cpus // self.workers)

    def build_jobs(self, host_jobs: int) -> int:
        """--dcuopt-build-jobs is the host's number of compilers at a time; this worker's part of it."""
        return max(1, host_jobs // self.workers) if host_jobs > 0 else host_jobs

    def rotated(self, items: Sequence[Any]) -> list[Any]:
        """`items` starting at this worker's slice: every worker builds everything the tests it may be given need
        (xdist hands tests out as it goes), and starting apart they compile different branches at once instead of
        waiting on one another's build-cache lock for the same branch."""
        start = len(items) * self.worker // self.workers
        return [*items[start:], *items[:start]]


# Set in an xdist worker from what its controller counted (`workers_on_host`): PYTEST_XDIST_WORKER_COUNT counts the
# workers of every host, and remote workers (`--tx ssh=...`, `socket=...`) share their host only with their own kind.
HOST_WORKERS_ENV = "DCUOPT_HOST_WORKERS"


def host_of(spec: Any) -> str:
    """Which host an execnet gateway spec (xdist's `--tx`) runs on: popen is the controller's host; ssh, socket and
    vagrant gateways name theirs; a gateway `via` a proxy runs on the proxy's host."""
    if getattr(spec, "via", None):
        return f"via:{spec.via}"
    for kind in ("ssh", "vagrant_ssh"):
        if getattr(spec, kind, None):
            return f"{kind}:{getattr(spec, kind)}"
    if getattr(spec, "socket", None):
        return "socket:" + str(spec.socket).rsplit(":", 1)[0]
    return "local"


def workers_on_host(specs: Sequence[Any], spec: Any) -> int:
    """How many of the session's workers run on the same host as `spec`'s (itself included)."""
    return sum(1 for other in specs if host_of(other) == host_of(spec)) or 1


HOST_WORKERS_KEY = "dcuopt_host_workers"  # in xdist's workerinput, set by the controller


def note_host_workers(workerinput: Mapping[str, Any], environ: MutableMapping[str, str] = os.environ) -> None:
    """In an xdist worker: keep the controller's count of the workers on this host for `cpu_share`."""
    if HOST_WORKERS_KEY in workerinput:
        environ[HOST_WORKERS_ENV] = str(int(workerinput[HOST_WORKERS_KEY]))


def cpu_share(environ: Mapping[str, str] = os.environ, cpus: int | None = None) -> CpuShare | None:
    """This xdist worker's share of the host's cores; None outside xdist (or alone on its host: the whole host)."""
    number = worker_number(xdist_worker_id(environ))
    workers = int(environ.get(HOST_WORKERS_ENV) or environ.get("PYTEST_XDIST_WORKER_COUNT") or 1)
    if number is None or workers <= 1:
        return None
    return CpuShare(cpus or os.cpu_count() or 1, workers, number % workers)


def limit_harness_threads(share: CpuShare) -> int | None:
    """Cap torch's intra-op threads in this pytest process (the reference outputs run here) at the worker's share.
    Returns the new count, or None without torch (no reference can run then either)."""
    try:
        import torch
    except ImportError:
        return None
    threads = min(torch.get_num_threads(), share.per_worker)
    torch.set_num_threads(threads)
    return threads
