"""Where the float64 reference runs: on the host, or on the GPU the branch runs on.

At real sizes the reference dominates the first branch's check: an 8192x6144x4096 matmul in float64 takes minutes
on the host and milliseconds on an H200. `--dcuopt-reference-device` (default `auto`) puts a large reference (its
buffers at least `GPU_REFERENCE_MIN_BYTES`) on the branch's GPU when the pytest process's torch can use it; `cpu`
keeps every reference on the host; `gpu` asks for the GPU for every reference of a GPU branch. The reference is
still float64 either way; the GPU's float64 rounds a reduction in another order than the host's, which is far
inside any float32 tolerance.

On the GPU, the reference runs under the GPU's device lock (run/devices.py): no branch of this or another session
is timed on that GPU meanwhile. A reference that fails on the GPU (it calls numpy on its tensors, say) runs again
on the host, and the record says why (`observations.reference_device`): never a silent change of place.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..run.devices import LOCK_WAIT_S, device_lock, held_by_this_process

if TYPE_CHECKING:
    from ..variant import Variant

MODES = ("auto", "cpu", "gpu")
GPU_REFERENCE_MIN_BYTES = 64 << 20  # below this the host computes a reference in well under a second
_MODE = ["auto"]


def set_mode(mode: str) -> None:
    """The session's --dcuopt-reference-device (the reference is computed by module-level functions)."""
    if mode not in MODES:
        raise ValueError(f"reference device {mode!r} is not one of {MODES}")
    _MODE[0] = mode


def mode() -> str:
    return _MODE[0]


@dataclass(frozen=True)
class Placement:
    """Where one reference call runs: `device` is a torch device string (None: the host) and `why` says why."""

    device: str | None
    why: str

    def to_json(self) -> dict[str, Any]:
        return {"device": self.device or "cpu", "why": self.why}


def placement(variant: Variant, nbytes: int) -> Placement:
    """Where the reference of this branch's call with `nbytes` of buffers runs, by the session's mode."""
    chosen = mode()
    if chosen == "cpu":
        return Placement(None, "--dcuopt-reference-device=cpu")
    if chosen == "auto" and nbytes < GPU_REFERENCE_MIN_BYTES:
        return Placement(None, f"{nbytes} bytes of buffers: below the {GPU_REFERENCE_MIN_BYTES >> 20} MiB at which "
                               "the GPU pays off")
    worker = variant.worker
    if worker is None or not worker.lock.name.startswith("gpu"):
        return Placement(None, f"{variant.label} does not run on a GPU")
    if worker.pin is not None:
        return Placement(None, f"the branch's workers are pinned to GPU {worker.pin.device} (--dcuopt-devices); the "
                               "pytest process does not map that pin to a device of its own")
    reason = _gpu_missing()
    if reason:
        return Placement(None, reason)
    return Placement("cuda:0", "a GPU branch's reference of "
                               f"{nbytes >> 20} MiB, on the GPU it runs on ({_device_name()})")


def _gpu_missing() -> str:
    try:
        import torch
    except ImportError:
        return "torch is not importable in the pytest process"
    if not torch.cuda.is_available():
        return f"torch {torch.__version__} in the pytest process sees no GPU (torch.cuda.is_available() is False)"
    return ""


def _device_name() -> str:
    import torch

    return str(torch.cuda.get_device_name(0))


def release_memory(where: Placement) -> None:
    """Hand the reference's GPU memory back to the driver: torch's caching allocator would keep it reserved in the
    pytest process, out of reach of the kernel workers (a branch near the device's memory would fail to allocate)."""
    if where.device is None or not where.device.startswith("cuda"):
        return
    import torch

    torch.cuda.empty_cache()


@contextmanager
def exclusive(variant: Variant, where: Placement) -> Iterator[None]:
    """Hold the GPU's device lock around a reference computed on it (unless this process holds it already: the
    interleaved A/B checks its last round's calls inside its own hold)."""
    worker = variant.worker
    if where.device is None or worker is None or not worker.lock.enabled or held_by_this_process(worker.lock.name):
        yield
        return
    with device_lock(worker.lock.name, label=f"float64 reference for {variant.label}", timeout_s=LOCK_WAIT_S):
        yield
