"""`TorchDeviceTimer`: the `timing.device_timer.DeviceTimer` over `torch.cuda` (events, the delay kernel, the L2
flush buffer, torch.profiler's device activity records) that `torch_runtime.TorchDeviceRuntime` times with."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..timing.device_timer import (
    FALLBACK_L2_BYTES,
    FLUSH_ENV,
    Activity,
    DeviceTimer,
    choose_flush_mode,
    flush_bytes_for,
)


class TorchDeviceTimer(DeviceTimer):
    """DeviceTimer over `torch.cuda`: events, `_sleep`, and an L2 flush buffer on `device`."""

    def __init__(self, torch: Any, device: Any, flush_mode: str | None = None,
                 telemetry: Callable[[], dict[str, Any]] | None = None) -> None:
        self.torch = torch
        self.device = device
        self.timer = "hip events" if getattr(torch.version, "hip", None) else "cuda events"
        properties = torch.cuda.get_device_properties(device)
        l2 = int(getattr(properties, "L2_cache_size", 0) or 0)
        self.l2_bytes = l2 if l2 > 0 else FALLBACK_L2_BYTES
        self.flush_mode = choose_flush_mode(flush_mode)
        size, self.l2_source = flush_bytes_for(l2)
        self.flush_bytes = size if self.flush_mode != "none" else 0
        self._buffer = torch.empty(max(1, self.flush_bytes // 4), dtype=torch.float32, device=device)
        self._buffer.zero_()
        self._sink = torch.empty((), dtype=torch.float32, device=device)
        self._telemetry = telemetry or dict
        self._has_sleep = callable(getattr(torch.cuda, "_sleep", None))
        self._tiny = torch.zeros(1, dtype=torch.float32, device=device)
        self.offset_cache = {}  # the profiler offset per bound call
        self.bracket_cache = {}  # the calibrated bracket cost of this device
        self.hiding_cache = {}  # the delay kernel's rate on this device
        self.activity_cache = {}  # the flush/marker activity names of a synchronizing sample (timing.sync)

    def event(self) -> Any:
        return self.torch.cuda.Event(enable_timing=True)

    def synchronize(self) -> None:
        self.torch.cuda.synchronize(self.device)

    def sleep(self, cycles: int) -> bool:
        if not self._has_sleep:
            return False
        if cycles > 0:
            self.torch.cuda._sleep(int(cycles))
        return True

    def tiny_kernel(self) -> bool:
        self._tiny.zero_()  # a one-element fill: one block, no memory traffic to speak of
        return True

    def flush(self) -> None:
        if self.flush_mode == "read":
            self.torch.sum(self._buffer, 0, out=self._sink)  # one reduction kernel, reads every byte
        elif self.flush_mode == "write":
            self._buffer.zero_()

    def profile_activities(self, body: Callable[[], Any]) -> list[Activity] | None:
        """Every device activity (kernels, copies, memsets) `body` queues, in start order, with start times
        (torch.profiler: CUPTI on CUDA, roctracer on ROCm); None when the profiler cannot record device activity
        here, and then `profiler_problem` says why. Kernels launched by a C ABI library's own (static) CUDA runtime
        are recorded too: CUPTI traces at the driver."""
        torch = self.torch
        try:
            from torch.profiler import ProfilerActivity, profile

            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                body()
                self.synchronize()
            events = prof.profiler.kineto_results.events()
            device = [e for e in events if e.device_type() == torch.autograd.DeviceType.CUDA and e.duration_ns() > 0]
        except Exception as exc:  # a missing profiler means "no profiler figures", said in the record
            self.profiler_problem = f"torch.profiler failed: {type(exc).__name__}: {exc}"
            return None
        device.sort(key=lambda e: e.start_ns())
        return [Activity(e.name(), e.duration_ns() * 1e-9, e.start_ns() * 1e-9) for e in device]

    def flush_info(self) -> dict[str, Any]:
        how = {"read": "a sum over the buffer (reads evict the kernel's lines; the L2 is left clean)",
               "write": "a memset of the buffer (nvbench's way; the L2 is left dirty)",
               "none": "no flush: cold samples are NOT cold"}[self.flush_mode]
        return {"mode": self.flush_mode, "bytes": self.flush_bytes, "l2_bytes": self.l2_bytes,
                "size_from": self.l2_source, "how": how, "env": FLUSH_ENV}

    def telemetry(self) -> dict[str, Any]:
        return self._telemetry()
