"""GPU runtime errors, named: `CudaError` (CUDA, or HIP in a ROCm/DTK torch) from a library's error code or from
torch's message, whether it left the context unusable, and `ErrorSource`, the error state of a kernel library's own
runtime that a toolchain attaches to `torch_runtime.TorchDeviceRuntime`."""
from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..errors import DcuOptError

# Errors after which the CUDA context is unusable (the process must go): cudaError_t codes.
STICKY_CUDA_ERRORS = {
    700: "cudaErrorIllegalAddress", 701: "cudaErrorLaunchOutOfResources", 702: "cudaErrorLaunchTimeout",
    710: "cudaErrorAssert", 714: "cudaErrorHardwareStackError", 715: "cudaErrorIllegalInstruction",
    716: "cudaErrorMisalignedAddress", 717: "cudaErrorInvalidAddressSpace", 718: "cudaErrorInvalidPc",
    719: "cudaErrorLaunchFailure", 999: "cudaErrorUnknown",
}
STICKY_NOT_REALLY = {701}  # out of resources is a launch error, not sticky
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



def checked_entry(entry: Callable[..., None], errors: ErrorSource) -> Callable[..., None]:
    """`entry`, followed by the library's last-error check on every call."""
    def solve(*args: Any) -> None:
        entry(*args)
        code = errors.last_error()
        if code:
            raise CudaError.from_code(code, errors, "right after calling solve() (a launch error: bad grid/block "
                                                    "size, too much shared memory, or an earlier fault)")
    return solve
