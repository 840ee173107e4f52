"""Exception hierarchy. Every message says the problem, the value, the reason and the fix."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .external_tools import ToolResult


class DcuOptError(Exception):
    """Base class of every error raised by pytest_dcuopt."""


class CaseError(DcuOptError):
    """A kernel case directory is malformed (ref.py, dims.json, shapes, ...)."""


class SignatureError(CaseError):
    """A `solve` signature cannot be parsed."""


class ToolchainUnavailable(DcuOptError):
    """The toolchain (compiler, runtime, device) is missing on this machine."""


class CompileError(DcuOptError):
    """The compiler rejected a kernel source; carries the exact command and its stderr."""

    def __init__(self, result: ToolResult, source: str) -> None:
        self.result = result
        self.source = source
        super().__init__(
            f"compiling {source} failed (exit {result.returncode}).\n"
            f"command: {result.command_line}\n{result.stderr.strip() or result.stdout.strip()}"
        )


class KernelCrashed(DcuOptError):
    """The isolated worker running the kernel died (signal or abnormal exit)."""


class KernelTimeout(DcuOptError):
    """The kernel did not return within the per-call timeout; its worker was killed."""


class WorkerError(DcuOptError):
    """The kernel or its setup raised inside the isolated worker."""


class TamperedFiles(WorkerError):
    """A file the run relies on (ref.py, a branch's source, a built library, an earlier state.json) changed while the
    kernel's worker answered: the kernel is blamed and its branch's verdicts are withheld."""


class TimedCallsWrong(DcuOptError):
    """A kernel's outputs were wrong on the checked calls among its timed calls (it passed its correctness calls)."""


class TimingRefused(TimedCallsWrong):
    """What the worker reported about its timing is refuted by what the pytest process measured itself (its clock
    slowed, its samples rewritten, its work left to a thread that runs on after the call returned)."""


class ReportError(DcuOptError):
    """Writing the run's results (state.json, summary.md, reports) failed in part; what was written stays."""
