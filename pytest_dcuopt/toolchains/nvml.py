"""A GPU's clocks, temperature, power and clock-limiting reasons through NVML (nvidia-ml-py), where it is installed:
optional readings for the record's `device` facts; an absent one is left out."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any


def nvml_handle(index: int) -> tuple[Any, Any] | None:
    try:
        import pynvml  # nvidia-ml-py

        pynvml.nvmlInit()
        import os

        visible = os.environ.get("CUDA_VISIBLE_DEVICES", "")
        physical = int(visible.split(",")[index]) if visible and visible.split(",")[index].strip().isdigit() else index
        return pynvml, pynvml.nvmlDeviceGetHandleByIndex(physical)
    except Exception:  # NVML is optional
        return None


def nvml_read(pynvml: Any, handle: Any) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, call in (("sm_clock_mhz", lambda: pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM)),
                      ("mem_clock_mhz", lambda: pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_MEM)),
                      ("temperature_c", lambda: pynvml.nvmlDeviceGetTemperature(handle, pynvml.NVML_TEMPERATURE_GPU)),
                      ("power_mw", lambda: pynvml.nvmlDeviceGetPowerUsage(handle)),
                      ("throttle_reasons", lambda: _throttle_names(pynvml, _throttle_bits(pynvml, handle)))):
        try:
            found[key] = call()
        except Exception:  # optional reading: absent ones are left out of the record
            continue
    return found


def nvml_static(pynvml: Any, handle: Any) -> dict[str, Any]:
    found: dict[str, Any] = {}
    readings: tuple[tuple[str, Callable[[], Any]], ...] = (
        ("driver", lambda: pynvml.nvmlSystemGetDriverVersion()),
        ("max_sm_clock_mhz", lambda: pynvml.nvmlDeviceGetMaxClockInfo(handle, pynvml.NVML_CLOCK_SM)),
        ("max_mem_clock_mhz", lambda: pynvml.nvmlDeviceGetMaxClockInfo(handle, pynvml.NVML_CLOCK_MEM)),
        ("power_limit_mw", lambda: pynvml.nvmlDeviceGetEnforcedPowerLimit(handle)),
    )
    for key, call in readings:
        try:
            value = call()
            found[key] = value.decode() if isinstance(value, bytes) else value
        except Exception:  # optional reading: absent ones are left out of the record
            continue
    return found


def _throttle_bits(pynvml: Any, handle: Any) -> int:
    """The clock-limiting reasons mask; newer NVML renamed "throttle reasons" to "clocks event reasons"."""
    if hasattr(pynvml, "nvmlDeviceGetCurrentClocksEventReasons"):
        return pynvml.nvmlDeviceGetCurrentClocksEventReasons(handle)
    return pynvml.nvmlDeviceGetCurrentClocksThrottleReasons(handle)


def _throttle_names(pynvml: Any, mask: int) -> list[str]:
    names = []
    for attribute in dir(pynvml):
        is_reason = attribute.startswith(("nvmlClocksThrottleReason", "nvmlClocksEventReason"))
        if is_reason and not attribute.endswith(("All", "None")):
            bit = getattr(pynvml, attribute)
            if isinstance(bit, int) and bit and mask & bit:
                names.append(attribute.split("Reason", 1)[1])
    return sorted(set(names)) or ["none"]
