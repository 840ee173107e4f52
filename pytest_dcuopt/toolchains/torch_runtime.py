"""Runtime for kernels that run on a GPU through torch's device API (CUDA, or HIP in a ROCm/DTK torch).

`TorchDeviceRuntime(device_index=0)` is the whole constructor: buffers are torch tensors on
`cuda:<device_index>` (torch calls HIP devices `cuda` too), pointers are `data_ptr()`, timing is
`timing.device.measure_device` with a `TorchDeviceTimer` (this module's `timing.device_timer.DeviceTimer` over
`torch.cuda`). A toolchain that loads a C ABI library may
`attach_errors(source)` an `ErrorSource` that reads the library's own runtime errors (the `cuda`
toolchain does; the `hip` toolchain passes one built on hipGetLastError). Without one, errors are
still caught at every synchronize, through torch, and named from torch's message. `TorchDeviceToolchain`
is the worker half that the GPU toolchains share: one runtime per worker, and `load` with the errors attached.

Streams: a C ABI `solve` that launches with `<<<grid, block>>>` (or `hipLaunchKernelGGL(..., 0, 0, ...)`)
uses the legacy default stream (handle 0). So does torch, unless a `torch.cuda.stream(...)` context
is active; `measure` refuses to time on any other current stream, because the events would then be
recorded on a stream the kernel does not use. A kernel that launches on a stream of its own that is
*blocking* (created without cudaStreamNonBlocking, or the per-thread default stream) is still
bracketed correctly: the legacy default stream waits for, and is waited on by, every blocking stream.
A kernel that launches on a non-blocking stream is not, and must not be timed this way.
"""
from __future__ import annotations

import abc
import ctypes
import os
import re
import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from ..errors import DcuOptError
from ..timing.calibration import DeviceCalibration, export_calibration, seed_device_timer
from ..timing.device import measure_device, rotation_sets
from ..timing.device_timer import (
    FALLBACK_L2_BYTES,
    FLUSH_ENV,
    Activity,
    DeviceTimer,
    choose_flush_mode,
    flush_bytes_for,
)
from ..timing.policy import Samples, TimingPolicy
from ..timing.sync_hooks import SyncMarks
from .base import Artifact, LoadedKernel, Runtime, Toolchain
from .cabi_binding import load_solve
from .cpu import CAbiLoaded

if TYPE_CHECKING:
    from ..case.cabi import Param

# Errors after which the CUDA context is unusable (the process must go): cudaError_t codes.
STICKY_CUDA_ERRORS = {
    700: "cudaErrorIllegalAddress", 701: "cudaErrorLaunchOutOfResources", 702: "cudaErrorLaunchTimeout",
    710: "cudaErrorAssert", 714: "cudaErrorHardwareStackError", 715: "cudaErrorIllegalInstruction",
    716: "cudaErrorMisalignedAddress", 717: "cudaErrorInvalidAddressSpace", 718: "cudaErrorInvalidPc",
    719: "cudaErrorLaunchFailure", 999: "cudaErrorUnknown",
}
STICKY_NOT_REALLY = {701}  # out of resources is a launch error, not sticky
# The binding's host arrays and staging of at least PIN_MIN_BYTES are page-locked (cuMemHostRegister), so copies to
# and from the device go by DMA at full link speed instead of through the driver's pageable bounce buffers.
PIN_ENV = "DCUOPT_PINNED_HOST"  # 0: pageable host memory (correct, slower copies)
PIN_MIN_BYTES = 4 << 20
PORTABLE = ctypes.c_uint(1)  # CU_MEMHOSTREGISTER_PORTABLE: page-locked for every context
# torch's wording of a runtime error -> its name (for runtimes without an ErrorSource).
_TORCH_WORDS = {
    "an illegal memory access was encountered": "cudaErrorIllegalAddress",
    "misaligned address": "cudaErrorMisalignedAddress",
    "unspecified launch failure": "cudaErrorLaunchFailure",
    "device-side assert triggered": "cudaErrorAssert",
    "an illegal instruction was encountered": "cudaErrorIllegalInstruction",
    "too many resources requested for launch": "cudaErrorLaunchOutOfResources",
    "invalid configuration argument": "cudaErrorInvalidConfiguration",
    "out of memory": "cudaErrorMemoryAllocation",
}


class CudaError(DcuOptError):
    """A CUDA (or HIP) runtime error, named. `fatal` errors left the context unusable: the worker exits."""

    def __init__(self, name: str, code: int | None, text: str, when: str, fatal: bool) -> None:
        self.name, self.code, self.text, self.when, self.fatal = name, code, text, when, fatal
        code_part = f" ({code})" if code is not None else ""
        consequence = (" The context is now unusable, so this branch's worker process exits and the next call starts "
                       "a fresh one." if fatal else "")
        out_of_memory = name.endswith(("MemoryAllocation", "OutOfMemory"))
        fix = (" Run the branch under compute-sanitizer (memcheck) to find the faulting access." if fatal else
               " The GPU had less free memory than was asked for (a workspace solve() allocates, or buffers at these "
               "dims): lower the sizes (dims.json, `dim_ranges`) or the workspace." if out_of_memory
               else " Check solve()'s launch configuration (grid and block sizes, shared memory) against the device's "
               "limits.")
        super().__init__(f"{name}{code_part}: {text}, {when}.{consequence}{fix}")

    @classmethod
    def from_code(cls, code: int, source: ErrorSource, when: str) -> CudaError:
        fatal = code in STICKY_CUDA_ERRORS and code not in STICKY_NOT_REALLY
        return cls(source.name(code), code, source.text(code), when, fatal)

    @classmethod
    def from_torch(cls, exc: BaseException, when: str) -> CudaError:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        lowered = message.lower()
        name = next((n for words, n in _TORCH_WORDS.items() if words in lowered), None)
        found = re.search(r"(cuda|hip)(Error\w+)", message)
        if found:
            name = found.group(1) + found.group(2)
        return cls(name or "CUDA error", None, message, when, fatal=name != "cudaErrorMemoryAllocation")


class ErrorSource:
    """A runtime's error state: last error, a synchronize that returns a code, names and texts."""

    def last_error(self) -> int:
        return 0

    def synchronize(self) -> int:
        return 0

    def name(self, code: int) -> str:
        return f"error {code}"

    def text(self, code: int) -> str:
        return "unknown"


class DeviceBuffer:
    """A device tensor holding the raw bytes of a host array (any dtype, bf16 as its uint16 bits)."""

    __slots__ = ("dtype", "tensor")

    def __init__(self, tensor: Any, dtype: np.dtype[Any]) -> None:
        self.tensor, self.dtype = tensor, dtype


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


class TorchDeviceRuntime(Runtime):
    """Buffers, synchronisation, errors and device timing on `torch.device("cuda", device_index)`."""

    def __init__(self, device_index: int = 0) -> None:
        import torch

        self.torch = torch
        if not torch.cuda.is_available():
            raise DcuOptError("torch.cuda.is_available() is False in the worker: no GPU to run on "
                              f"(torch {torch.__version__}); the toolchain should have reported compile-only.")
        torch.cuda.set_device(device_index)
        self.device = torch.device("cuda", device_index)
        self.device_name = torch.cuda.get_device_name(device_index)
        self.api = "hip" if getattr(torch.version, "hip", None) else "cuda"
        self.errors: ErrorSource | None = None
        self.sync_marks: SyncMarks | None = None  # the loaded library's sync hooks (timing.sync_hooks), if it has them
        self._device_timer: TorchDeviceTimer | None = None
        self._offered: DeviceCalibration | None = None  # from the first worker on this device (timing.calibration)
        self._nvml: Any = _nvml_handle(device_index) if self.api == "cuda" else None
        self._driver: Any = None  # the CUDA driver library while page-locking is on (None: pageable)
        self.host_memory = self._host_memory_mode()  # what the record says about it

    def attach_errors(self, source: ErrorSource) -> None:
        self.errors = source

    def _host_memory_mode(self) -> str:
        if os.environ.get(PIN_ENV, "1") == "0":
            return f"pageable ({PIN_ENV}=0)"
        if self.api != "cuda":
            return "pageable: page-locking is implemented for CUDA only (hipHostRegister untested: no HIP device here)"
        try:
            self._driver = ctypes.CDLL("libcuda.so.1")
        except OSError as exc:
            return f"pageable: the CUDA driver library did not load for page-locking ({exc})"
        return f"page-locked (cuMemHostRegister) for host arrays of {PIN_MIN_BYTES >> 20} MiB or more"

    def attach_sync_marks(self, marks: SyncMarks | None) -> None:
        self.sync_marks = marks

    # ----- memory -----------------------------------------------------------------------
    def _host_bytes(self, array: np.ndarray) -> Any:
        """A CPU tensor over the array's bytes, without a copy where numpy allows (torch.from_numpy refuses
        read-only memory: those are copied)."""
        raw = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
        return self.torch.from_numpy(raw if raw.flags.writeable else raw.copy())

    def host_empty(self, count: int, dtype: np.dtype[Any]) -> np.ndarray:
        array = np.empty(count, dtype=dtype)
        if array.nbytes >= PIN_MIN_BYTES and self._driver is not None:
            self._pin(array)
        return array

    def _pin(self, array: np.ndarray) -> None:
        """Page-lock `array`'s memory until it is freed. Through the driver API, which keeps no last-error state:
        a refusal (a locked-memory limit) cannot surface later as another call's error. Where it fails, later
        arrays stay pageable and `describe()` says why."""
        address = ctypes.c_void_p(array.ctypes.data)
        code = int(self._driver.cuMemHostRegister_v2(address, ctypes.c_size_t(array.nbytes), PORTABLE))
        if code != 0:
            self._driver = None
            self.host_memory = (f"pageable: cuMemHostRegister of {array.nbytes} bytes failed with CUresult {code}; "
                                f"copies are correct, only slower. {PIN_ENV}=0 skips the attempt")
            return
        # numpy clears an array's weak references before it frees the memory: unregistered first. Not at exit: the
        # process's end releases the pages, and the CUDA context may be gone by then.
        weakref.finalize(array, self._driver.cuMemHostUnregister, address).atexit = False

    def upload(self, array: np.ndarray) -> DeviceBuffer:
        tensor = self._host_bytes(array).to(self.device)
        self.check("after copying a buffer to the device")
        return DeviceBuffer(tensor, array.dtype)

    def download(self, buffer: DeviceBuffer) -> np.ndarray:
        self.synchronize()
        return buffer.tensor.cpu().numpy().view(buffer.dtype).copy()

    def download_into(self, buffer: DeviceBuffer, out: np.ndarray) -> np.ndarray:
        self.synchronize()
        self._host_bytes(out).copy_(buffer.tensor)  # `out` is contiguous and writable (the binding's staging)
        return out

    def write(self, buffer: DeviceBuffer, array: np.ndarray) -> None:
        buffer.tensor.copy_(self._host_bytes(array))
        self.check("after writing a buffer on the device")

    def pointer(self, buffer: DeviceBuffer) -> int:
        return int(buffer.tensor.data_ptr())

    # ----- errors -----------------------------------------------------------------------
    def synchronize(self) -> None:
        self.check("at synchronize after the kernel ran (an asynchronous fault inside the kernel)", sync=True)

    def check(self, when: str, sync: bool = False) -> None:
        """Raise CudaError if the library's runtime or torch reports an error."""
        if self.errors is not None:
            code = self.errors.synchronize() if sync else self.errors.last_error()
            if code:
                raise CudaError.from_code(code, self.errors, when)
        if sync:
            try:
                self.torch.cuda.synchronize(self.device)
            except RuntimeError as exc:
                raise CudaError.from_torch(exc, when) from None

    # ----- timing -----------------------------------------------------------------------
    def device_timer(self, l2_flush: str = "") -> TorchDeviceTimer:
        mode = choose_flush_mode(l2_flush)
        if self._device_timer is None or self._device_timer.flush_mode != mode:
            self._device_timer = None  # free the old flush buffer first
            self._device_timer = TorchDeviceTimer(self.torch, self.device, mode, telemetry=self.telemetry)
        return self._device_timer

    def rotation_sets(self, working_set_bytes: int) -> int:
        """How many input sets `measure_sets` wants for a working set of this size (1 = no rotation)."""
        return rotation_sets(working_set_bytes, self.device_timer().l2_bytes)

    def measure(self, launch: Callable[[], Any], policy: TimingPolicy) -> Samples:
        return self.measure_sets([launch], policy)

    def measure_sets(self, launches: Sequence[Callable[[], Any]], policy: TimingPolicy,
                     working_set_bytes: int = 0) -> Samples:
        current = self.torch.cuda.current_stream(self.device)
        if int(current.cuda_stream) != 0:
            raise DcuOptError(f"the current torch stream is {current} (handle {current.cuda_stream:#x}), "
                              "not the legacy default stream that a C ABI solve() launches on; the events would not "
                              "bracket the kernel. Do not time inside a torch.cuda.stream(...) context.")
        self.synchronize()
        device_timer = self.device_timer(policy.l2_flush)
        handover = self._take_offered(device_timer)
        samples = measure_device(list(launches), policy, device_timer, working_set_bytes, sync_marks=self.sync_marks)
        self.synchronize()
        samples.extra["device"] = self.device_name
        if handover is not None:
            samples.extra["calibration_handover"] = handover
        return samples

    # ----- calibrations shared between workers on one device (timing.calibration) ----------
    def accept_calibration(self, calibration: DeviceCalibration) -> None:
        """A calibration measured by an earlier worker on this device; used by the next measurement."""
        self._offered = calibration

    def calibration(self) -> DeviceCalibration | None:
        """This worker's calibrations (measured here or handed over), for later workers on this device."""
        if self._device_timer is None:
            return None
        return export_calibration(self._device_timer, self.device_name, self._device_timer.flush_mode)

    def _take_offered(self, device_timer: TorchDeviceTimer) -> dict[str, Any] | None:
        offered, self._offered = self._offered, None
        if offered is None:
            return None
        return seed_device_timer(device_timer, offered, self.device_name, device_timer.flush_mode)

    # ----- facts ------------------------------------------------------------------------
    def telemetry(self) -> dict[str, Any]:
        """Clocks, temperature, power and throttle reasons now, where readable (NVML, else torch's helpers)."""
        found: dict[str, Any] = {}
        if self._nvml is not None:
            found.update(_nvml_read(*self._nvml))
        if "sm_clock_mhz" not in found:
            for key, getter in (("sm_clock_mhz", "clock_rate"), ("temperature_c", "temperature"),
                                ("power_mw", "power_draw")):
                try:
                    found[key] = getattr(self.torch.cuda, getter)(self.device)
                except Exception:  # optional readings (needs pynvml / amdsmi)
                    continue
        return found

    def describe(self) -> dict[str, Any]:
        torch = self.torch
        properties = torch.cuda.get_device_properties(self.device)
        facts: dict[str, Any] = {
            "device": self.device_name, "api": self.api, "timer": f"{self.api} events (timing.device)",
            "torch": torch.__version__,
            "runtime_version": torch.version.hip if self.api == "hip" else torch.version.cuda,
            "multiprocessors": getattr(properties, "multi_processor_count", None),
            "l2_bytes": getattr(properties, "L2_cache_size", None),
            "memory_bytes": getattr(properties, "total_memory", None),
            "host_memory": self.host_memory,
            "arch": (getattr(properties, "gcnArchName", None) if self.api == "hip"
                     else f"sm_{properties.major}{properties.minor}"),
        }
        if self._nvml is not None:
            facts.update(_nvml_static(*self._nvml))
        facts.update(self.telemetry())
        return {k: v for k, v in facts.items() if v is not None}


class TorchDeviceToolchain(Toolchain):
    """The worker side of a GPU toolchain: one `TorchDeviceRuntime` per worker, and C ABI kernels loaded with
    the library's own runtime errors attached to it (`error_source`)."""

    #: Ask the library for its last error right after every `solve` call (launch errors then name the call).
    check_each_call: ClassVar[bool] = False
    preload_modules: ClassVar[tuple[str, ...]] = ("torch",)  # TorchDeviceRuntime

    def __init__(self, arch: str | None = None, extra_flags: Sequence[str] = ()) -> None:
        super().__init__(arch, extra_flags)
        self._runtime: TorchDeviceRuntime | None = None

    @abc.abstractmethod
    def error_source(self, library: ctypes.CDLL) -> ErrorSource | None:
        """The kernel library's own runtime errors, or None when it exports no way to read them."""

    def runtime(self) -> TorchDeviceRuntime:
        if self._runtime is None:
            self._runtime = TorchDeviceRuntime()
        return self._runtime

    def sync_marks(self, library: ctypes.CDLL) -> SyncMarks | None:
        """The kernel library's sync hooks (timing.sync_hooks), or None when it has none (the default)."""
        return None

    def load(self, artifact: Artifact, params: Sequence[Param]) -> LoadedKernel:
        library, entry = load_solve(artifact.path, params)
        self.runtime().attach_sync_marks(self.sync_marks(library))
        errors = self.error_source(library)
        if errors is not None:
            self.runtime().attach_errors(errors)
            if self.check_each_call:
                entry = checked_entry(entry, errors)
        return CAbiLoaded(params, entry)


def checked_entry(entry: Callable[..., None], errors: ErrorSource) -> Callable[..., None]:
    """`entry`, followed by the library's last-error check on every call."""
    def solve(*args: Any) -> None:
        entry(*args)
        code = errors.last_error()
        if code:
            raise CudaError.from_code(code, errors, "right after calling solve() (a launch error: bad grid/block "
                                                    "size, too much shared memory, or an earlier fault)")
    return solve


def _nvml_handle(index: int) -> tuple[Any, Any] | None:
    try:
        import pynvml  # nvidia-ml-py

        pynvml.nvmlInit()
        import os

        visible = os.environ.get("CUDA_VISIBLE_DEVICES", "")
        physical = int(visible.split(",")[index]) if visible and visible.split(",")[index].strip().isdigit() else index
        return pynvml, pynvml.nvmlDeviceGetHandleByIndex(physical)
    except Exception:  # NVML is optional
        return None


def _nvml_read(pynvml: Any, handle: Any) -> dict[str, Any]:
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


def _nvml_static(pynvml: Any, handle: Any) -> dict[str, Any]:
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
