"""Runtime for kernels that run on the CPU on numpy buffers."""
from __future__ import annotations

import platform
from collections.abc import Callable
from typing import Any

import numpy as np

from ..timing.host import measure_host
from ..timing.policy import Samples, TimingPolicy
from .base import Runtime


class HostRuntime(Runtime):
    device_name = platform.processor() or platform.machine()

    def upload(self, array: np.ndarray) -> np.ndarray:
        return np.array(array, copy=True)

    def download(self, buffer: np.ndarray) -> np.ndarray:
        return np.array(buffer, copy=True)

    def download_into(self, buffer: np.ndarray, out: np.ndarray) -> np.ndarray:
        return buffer  # already host memory: read in place (the snapshot copies what it keeps)

    def write(self, buffer: np.ndarray, array: np.ndarray) -> None:
        np.copyto(buffer, array)

    def pointer(self, buffer: np.ndarray) -> int:
        return int(buffer.ctypes.data)

    def synchronize(self) -> None:
        return None

    def measure(self, launch: Callable[[], Any], policy: TimingPolicy) -> Samples:
        return measure_host(launch, policy)

    def describe(self) -> dict[str, Any]:
        return {"device": cpu_model(), "timer": "host perf_counter_ns"}


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()
