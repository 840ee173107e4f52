"""Runtime for kernels that run on a GPU through torch's device API (CUDA, or HIP in a ROCm/DTK torch).

`TorchDeviceRuntime(device_index=0)` is the whole constructor: buffers are torch tensors on
`cuda:<device_index>` (torch calls HIP devices `cuda` too), pointers are `data_ptr()`, timing is
`timing.device.measure_device` with a `TorchDeviceTimer` (`torch_device_timer.py`: the
`timing.device_timer.DeviceTimer` over `torch.cuda`). A toolchain that loads a C ABI library may
`attach_errors(source)` an `ErrorSource` (`gpu_errors.py`) that reads the library's own runtime errors (the `cuda`
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
import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from ..errors import DcuOptError
from ..timing.calibration import DeviceCalibration, export_calibration, seed_device_timer
from ..timing.device import measure_device, rotation_sets
from ..timing.device_timer import choose_flush_mode
from ..timing.policy import Samples, TimingPolicy
from ..timing.sync_hooks import SyncMarks
from .base import Artifact, LoadedKernel, Runtime, Toolchain
from .cabi_binding import load_solve
from .cpu import CAbiLoaded
from .gpu_errors import CudaError, ErrorSource, checked_entry
from .nvml import nvml_handle, nvml_read, nvml_static
from .torch_device_timer import TorchDeviceTimer

if TYPE_CHECKING:
    from ..case.cabi import Param

# The binding's host arrays and staging of at least PIN_MIN_BYTES are page-locked (cuMemHostRegister), so copies to
# and from the device go by DMA at full link speed instead of through the driver's pageable bounce buffers.
PIN_ENV = "DCUOPT_PINNED_HOST"  # 0: pageable host memory (correct, slower copies)
PIN_MIN_BYTES = 4 << 20
PORTABLE = ctypes.c_uint(1)  # CU_MEMHOSTREGISTER_PORTABLE: page-locked for every context


class DeviceBuffer:
    """A device tensor holding the raw bytes of a host array (any dtype, bf16 as its uint16 bits)."""

    __slots__ = ("dtype", "tensor")

    def __init__(self, tensor: Any, dtype: np.dtype[Any]) -> None:
        self.tensor, self.dtype = tensor, dtype


def roll_bytes(out: Any, source: Any, count: int, offset: int) -> None:
    """`out[:count]` = `source[:count]` rotated left by `offset` bytes, `out[count:]` = `source[count:]`: three copies
    between 1-D uint8 tensors of one device, queued on its current stream (the timed calls' rotation,
    `cabi_binding.CAbiBinding.prepare_call`: 0.1 ms for 128 MB on a GPU, against tens of ms through the host)."""
    out[:count - offset].copy_(source[offset:count])
    out[count - offset:count].copy_(source[:offset])
    out[count:].copy_(source[count:])



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
        self._nvml: Any = nvml_handle(device_index) if self.api == "cuda" else None
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

    rolls_on_device = True

    def roll_into(self, buffer: DeviceBuffer, source: DeviceBuffer, count: int, offset: int) -> None:
        roll_bytes(buffer.tensor, source.tensor, count * buffer.dtype.itemsize, offset * buffer.dtype.itemsize)

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
            found.update(nvml_read(*self._nvml))
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
            facts.update(nvml_static(*self._nvml))
        facts.update(self.telemetry())
        return {k: v for k, v in facts.items() if v is not None}


class TorchDeviceToolchain(Toolchain):
    """The worker side of a GPU toolchain: one `TorchDeviceRuntime` per worker, and C ABI kernels loaded with
    the library's own runtime errors attached to it (`error_source`)."""

    #: Ask the library for its last error right after every `solve` call (launch errors then name the call).
    check_each_call: ClassVar[bool] = False
    preload_modules: ClassVar[tuple[str, ...]] = ("torch",)  # TorchDeviceRuntime
    # timing/device.py prepares every warm-up call and cold sample (inputs rotated on the device) and snapshots the
    # checked ones; the sync method's samples reuse the warm-up's last inputs (they reach no checked call past it).
    checks_timed_calls: ClassVar[bool] = True

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
