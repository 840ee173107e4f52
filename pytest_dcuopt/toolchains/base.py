"""The toolchain interface: build, load, launch, synchronize, time, disassemble, report resources.

A toolchain runs in two places. In the pytest process it builds artifacts (through
`external_tools.run_tool`) and reads their ISA; inside the isolated worker process it loads an
artifact (a `LoadedKernel`), binds it to the buffers of one call (a `Binding`, on buffers
that its `Runtime` owns) and launches it.
"""
from __future__ import annotations

import abc
import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import numpy as np

from ..errors import ToolchainUnavailable
from ..isa import x86
from ..isa.model import IsaDump, ResourceUsage

if TYPE_CHECKING:
    from ..case.cabi import Param
    from ..case.model import Branch
    from ..timing.policy import Samples, TimingPolicy
    from .binding import BindSpec, Snapshot
    from .cache import BuildCache


class Capability(enum.Enum):
    """What a toolchain can do on this machine."""

    RUN = "run"  # build and execute kernels
    COMPILE_ONLY = "compile-only"  # build and inspect ISA; no device to run on
    UNAVAILABLE = "unavailable"


@dataclass(frozen=True)
class Availability:
    capability: Capability
    reason: str  # why it is degraded/unavailable, or what it found
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def can_build(self) -> bool:
        return self.capability is not Capability.UNAVAILABLE

    @property
    def can_run(self) -> bool:
        return self.capability is Capability.RUN

    def to_json(self) -> dict[str, Any]:
        # The verdict goes last: no detail may overwrite it (a device's compute capability once did).
        return {**dict(self.details), "capability": self.capability.value, "reason": self.reason}


@dataclass(frozen=True)
class Artifact:
    """A built kernel: what was built, from what, how, and where it lives."""

    toolchain: str
    source: Path
    path: Path
    arch: str | None
    command: str  # the exact build command line ("" when nothing was compiled)
    log: str  # compiler stderr
    key: str  # build-cache key
    cached: bool
    seconds: float
    # What the toolchain knows about this build beyond the command (a Triton variant's options, environment,
    # compile probe and kernel metadata); in the record under `build.details`, left out when empty.
    details: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def to_json(self) -> dict[str, Any]:
        found = {"toolchain": self.toolchain, "artifact": str(self.path), "arch": self.arch, "command": self.command,
                 "cache_key": self.key, "cached": self.cached, "seconds": round(self.seconds, 3),
                 "log": self.log[-2000:]}
        return {**found, "details": dict(self.details)} if self.details else found


class BranchUnavailable(ToolchainUnavailable):
    """This stack cannot build this one branch (a variant the compiler rejects when probed): the branch is reported
    unavailable with the compiler's reason, never as a failed or slow branch."""

    def __init__(self, message: str, command: str = "", details: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.command = command  # the probe that was rejected
        self.details = dict(details or {})


class Runtime(abc.ABC):
    """Device memory and synchronisation inside the worker process."""

    device_name: str = "host"

    @abc.abstractmethod
    def upload(self, array: np.ndarray) -> Any:
        """Return a device buffer holding a copy of the host `array`."""

    @abc.abstractmethod
    def download(self, buffer: Any) -> np.ndarray:
        """Return a host copy of `buffer`."""

    def download_into(self, buffer: Any, out: np.ndarray) -> np.ndarray:
        """The buffer's contents as a host array: `out` (same size and type, contiguous) filled with a copy, or, where
        the runtime's buffers are host memory, the buffer itself (valid until the next call; callers copy what
        they keep).

        For the snapshots of checked calls: at hundreds of MB, touching a fresh array's pages costs more than the
        copy itself (0.2 s per 128 MB on a VM), and a branch makes a dozen snapshots. This default goes through
        `download`; runtimes that can copy into existing memory override it."""
        np.copyto(out, self.download(buffer))
        return out

    def host_empty(self, count: int, dtype: np.dtype[Any]) -> np.ndarray:
        """Uninitialized host memory for `count` elements that this runtime copies to and from its buffers (the
        binding's host arrays and staging). Device runtimes may hand back page-locked memory (faster copies)."""
        return np.empty(count, dtype=dtype)

    @abc.abstractmethod
    def write(self, buffer: Any, array: np.ndarray) -> None:
        """Overwrite `buffer` in place with host `array` (same size); its address stays valid."""

    @abc.abstractmethod
    def pointer(self, buffer: Any) -> int:
        """The raw address to pass to a C ABI kernel."""

    #: Whether `roll_into` works: else a caller rotates on the host and `write`s the result.
    rolls_on_device: bool = False

    def roll_into(self, buffer: Any, source: Any, count: int, offset: int) -> None:
        """On the device, without the host: `buffer[:count]` = `source[:count]` rotated left by `offset` elements
        (`binding.rolled_into`), the rest of `buffer` (its guard) = the rest of `source`; both buffers this runtime's,
        of one type and size. Queued like a kernel (ordered before the next launch)."""
        raise NotImplementedError(f"{type(self).__name__} cannot rotate a buffer on the device (rolls_on_device)")

    @abc.abstractmethod
    def synchronize(self) -> None:
        """Wait until every launched kernel has finished."""

    @abc.abstractmethod
    def measure(self, launch: Any, policy: TimingPolicy) -> Samples:
        """Time `launch()` under `policy`; the device-appropriate method (host clock, device events)."""

    def rotation_sets(self, working_set_bytes: int) -> int:
        """How many input sets a measurement wants, so inputs are not cache-resident (1 = no rotation)."""
        return 1

    def measure_sets(self, launches: Sequence[Any], policy: TimingPolicy, working_set_bytes: int = 0) -> Samples:
        """Time rotating over `launches` (one per input set). Runtimes that flush instead use the first."""
        return self.measure(launches[0], policy)

    def describe(self) -> dict[str, Any]:
        """Device facts worth recording with the timings (name, clocks, temperature...)."""
        return {"device": self.device_name}


class Binding(Protocol):
    """The buffers of one call, bound to a loaded kernel (inputs drawn, outputs poisoned, guards placed)."""

    @property
    def nbytes(self) -> int:
        """Bytes of all buffers of one call (the working set a cache could hold)."""

    def launch(self) -> None:
        """Call the kernel once on these buffers (asynchronous on a device)."""

    def reset(self) -> None:
        """Restore the pristine buffers before a checked call."""

    def snapshot(self) -> Snapshot:
        """Synchronize, then what the call saw and produced (inputs, outputs, guard findings)."""


class LoadedKernel(Protocol):
    """What `Toolchain.load` returns in the worker: a kernel that can be bound to the buffers of a call."""

    def bind(self, spec: BindSpec, runtime: Runtime) -> Binding:
        """Buffers for one call with `spec`'s dims and seed, on `runtime`."""


# The reader of a built artifact's ISA, per ISA family whose artifacts are files one tool reads the same way whatever
# built them: a toolchain of that family gets it as its `disassemble` (one that builds differently overrides it).
FAMILY_DISASSEMBLERS: Mapping[str, Callable[[Path], dict[str, str]]] = {"x86": x86.disassemble_elf}


class Toolchain(abc.ABC):
    """One compiler + runtime family. Subclasses are registered by name in the registry."""

    name: ClassVar[str]
    extensions: ClassVar[tuple[str, ...]]  # kernel file suffixes this toolchain builds
    isa_family: ClassVar[str] = "none"  # x86, amdgcn, dcu, sass, none
    isa_families: ClassVar[tuple[str, ...]] = ()  # every family its ISA may come in, when several (hip: amdgcn, dcu)
    c_abi: ClassVar[bool] = True  # kernels expose extern "C" solve(...); False for the Python contract
    # Its runtime prepares every timed call alike (inputs rotated between calls) and hands back the timed calls a
    # timing request names (run/kernel_calls.py `TimedCalls`): the pytest process then requires them in every reply.
    checks_timed_calls: ClassVar[bool] = False
    # Heavy modules the worker's `runtime` and `load` import (torch: seconds), imported by a spare worker ahead of need
    preload_modules: ClassVar[tuple[str, ...]] = ()

    def __init__(self, arch: str | None = None, extra_flags: Sequence[str] = ()) -> None:
        self.arch = arch
        self.extra_flags = tuple(extra_flags)

    @classmethod
    def worker_modules(cls) -> tuple[str, ...]:
        """What a worker imports before its first request (run/spare_workers.py): this toolchain's module, then
        `preload_modules`."""
        return (cls.__module__, *cls.preload_modules)

    @classmethod
    def expand_branches(cls, branch: Branch) -> Sequence[Branch]:
        """The branches one source of this toolchain stands for (read without importing it): itself, plus any
        variants it declares (Triton: `<branch>@<variant>` for its config and hint variants)."""
        return (branch,)

    @abc.abstractmethod
    def availability(self) -> Availability:
        """Probe the machine (cheap; cached by the caller)."""

    @abc.abstractmethod
    def identity(self) -> str:
        """Compiler identity (name + version) that goes into the build-cache key."""

    @abc.abstractmethod
    def build(self, source: Path, cache: BuildCache) -> Artifact:
        """Build `source` into the cache (reusing a cached build), or raise CompileError."""

    @abc.abstractmethod
    def load(self, artifact: Artifact, params: Sequence[Param]) -> LoadedKernel:
        """Worker side: the built kernel, loaded and ready to bind to buffers."""

    @abc.abstractmethod
    def runtime(self) -> Runtime:
        """Worker side: the runtime that owns buffers and timing for this toolchain."""

    def device_platform(self) -> str | None:
        """The GPU platform its kernels run on, which picks the variable that pins a worker to one GPU
        (run/devices.py: "nvidia" -> CUDA_VISIBLE_DEVICES, "amd" -> HIP_VISIBLE_DEVICES); None for kernels that run
        on the host (their timing holds the host lock instead). Asked in the pytest process: must not open a device."""
        return None

    def disassemble(self, artifact: Artifact) -> dict[str, str]:
        """Per-function ISA text: by default its ISA family's reader (`FAMILY_DISASSEMBLERS`; x86: objdump on the
        ELF file), {} for a family without one (a toolchain of such a family overrides this)."""
        reader = FAMILY_DISASSEMBLERS.get(self.isa_family)
        return reader(artifact.path) if reader is not None else {}

    def resource_usage(self, artifact: Artifact) -> dict[str, ResourceUsage]:
        """Per-function resources. Toolchains without resource data return {}."""
        return {}

    def isa_dump(self, artifact: Artifact) -> IsaDump | None:
        """A complete per-function dump (text, resources, notes), for toolchains that build one themselves;
        None: the ISA observer wraps `disassemble` and `resource_usage` instead."""
        return None


def expand_branches(branches: Sequence[Branch], toolchains: Sequence[type[Toolchain]]) -> list[Branch]:
    """Every branch with the variants the toolchain that builds it declares for it, in order."""
    found: list[Branch] = []
    for branch in branches:
        owner = next((t for t in toolchains if branch.suffix in t.extensions), None)
        found += list(owner.expand_branches(branch)) if owner is not None else [branch]
    return found
