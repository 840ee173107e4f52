"""`triton`: Triton kernels (`kernel.triton.py`: `@triton.jit` kernels and a launcher `solve(**params)`).

Contract (toolchains/triton_contract.py): the launcher takes the case's buffers (ref.py `shapes`) as torch
tensors and its dims as Python scalars, by name; ref.py `outputs` says which buffers it writes (default:
the buffers not in `inputs`), `dtypes` their dtypes (default float32). Buffers are laid out as for a C
ABI kernel (`binding.CAbiBinding`): outputs NaN-poisoned before every call, a guard zone after every
buffer (the launcher gets a view of the first `count` elements), const inputs checked bit for bit.

Where kernels run (decided in the worker, before triton is imported there):
- a GPU that torch sees: compiled by Triton and timed with the shared device timing (`TorchDeviceRuntime`);
- no GPU (CI), or `TRITON_INTERPRET=1` in the environment: Triton's interpreter on torch CPU tensors.
  The interpreter has no bounds checks (an out-of-bounds store lands in the guard, or corrupts the
  worker's heap: the worker is isolated, so only this branch fails). Its timings are host-clock times of
  the interpreter, labelled as such in the record: they say nothing about GPU performance.

ISA with no GPU: each `@triton.jit` kernel the launcher launches is compiled ahead of time for a target
(toolchains/triton_isa.py): `--dcuopt-arch` (gfx90a, gfx942, hip:gfx942, sm_90, cuda:90), else the
GPU's arch, else `$DCUOPT_TRITON_ARCH`, else gfx942 (said in the dump's notes).

Importing this module imports neither torch nor triton.
"""
from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from ..case.buffers import numel
from ..case.cabi import Param
from ..errors import CaseError
from ..isa.model import IsaDump, ResourceUsage
from ..timing.host import measure_host
from ..timing.policy import Samples, TimingPolicy
from .base import Artifact, Availability, Capability, Runtime, Toolchain
from .binding import BindSpec, CAbiBinding, Snapshot
from .build import cached_entry
from .cache import BuildCache
from .probe import torch_build
from .torch_runtime import DeviceBuffer, TorchDeviceRuntime
from .triton_contract import TRITON_SUFFIX, TritonContract, contract_for_build
from .triton_isa import dump_triton_artifact, target_for

CONTRACT_FILE = "contract.json"
INTERPRET_ENV = "TRITON_INTERPRET"
#: Triton 3.9 warns when this is unset and will change its default in 3.10: pin today's default, and record it.
FP_FUSION_ENV = "TRITON_DEFAULT_FP_FUSION"
INTERPRETER_TIMER = "host perf_counter_ns under the Triton interpreter (TRITON_INTERPRET=1)"
INTERPRETER_NOTE = ("interpreter timing: Triton's CPU interpreter emulating the kernel with numpy; NOT representative "
                    "of any GPU (use it only to see that timing runs)")
_TRUE = ("1", "true", "yes", "on")


def triton_version() -> str | None:
    try:
        return metadata.version("triton")
    except metadata.PackageNotFoundError:
        return None


def torch_gpu_platform() -> str | None:
    """The GPU platform torch was built for: amd (ROCm/DTK), nvidia (CUDA), None (CPU-only, or no torch). Read from
    torch/version.py without importing torch (the pytest process must not pay for that, nor open a device)."""
    try:
        built = torch_build()
    except OSError:
        return None
    if built is None:
        return None
    platforms = {"hip": "amd", "cuda": "nvidia"}  # hip first: a ROCm build may name a CUDA version too
    return next((platforms[k] for k in ("hip", "cuda") if built.get(k) not in (None, "None")), None)


def interpreter_forced() -> bool:
    return os.environ.get(INTERPRET_ENV, "").strip().lower() in _TRUE


class TritonToolchain(Toolchain):
    name = "triton"
    extensions = (TRITON_SUFFIX,)
    isa_family = "amdgcn"
    isa_families = ("amdgcn", "dcu", "sass")
    c_abi = False

    def __init__(self, arch: str | None = None, extra_flags: Sequence[str] = ()) -> None:
        super().__init__(arch, extra_flags)
        self._runtime: Runtime | None = None
        self._dumps: dict[tuple[str, str], IsaDump] = {}

    # ----- pytest side ------------------------------------------------------------------
    def availability(self) -> Availability:
        version = triton_version()
        if version is None:
            return Availability(Capability.UNAVAILABLE, "triton is not installed: `pip install triton==3.9.0` "
                                "(scripts/requirements.txt pins it)")
        if importlib.util.find_spec("torch") is None:
            return Availability(Capability.UNAVAILABLE, "torch is not installed: Triton launchers take torch tensors "
                                "(the interpreter too); `pip install torch==2.13.0`")
        how = ("the Triton interpreter ($TRITON_INTERPRET=1 is set)" if interpreter_forced() else
               "compiled on the GPU when the worker's torch sees one, else the Triton interpreter (CPU; host "
               "timings labelled not representative)")
        return Availability(Capability.RUN, f"triton {version}: kernels run {how}; ISA from ahead-of-time compiles",
                            {"triton": version, "interpreter_forced": interpreter_forced()})

    def identity(self) -> str:
        return f"triton {triton_version()} | python {sys.version.split()[0]}"

    def device_platform(self) -> str | None:
        """None under the interpreter (forced, or a CPU-only torch: the worker has no GPU to compile for); else the
        GPU platform torch was built for (its worker compiles for the GPU when torch sees one)."""
        if interpreter_forced():
            return None
        return torch_gpu_platform()

    def build(self, source: Path, cache: BuildCache) -> Artifact:
        """Nothing is compiled here (Triton compiles at launch): the build derives and stores the contract."""
        import time

        started = time.perf_counter()
        contract, inputs = contract_for_build(source, self.name)
        key = cache.key(source, self.name, self.identity(), None, (f"contract:{inputs}", "contract-v1"))
        path, made = cached_entry(cache, key, CONTRACT_FILE, lambda staging: contract.write(staging / CONTRACT_FILE))
        log = f"outputs: {', '.join(contract.outputs)} ({contract.outputs_source})"
        return Artifact(self.name, source, path, None, "", log, key, not made, time.perf_counter() - started)

    # ----- worker side ------------------------------------------------------------------
    def runtime(self) -> Runtime:
        """The GPU runtime when torch sees a GPU (and the interpreter is not forced), else the interpreter's.

        Runs before `load`, so TRITON_INTERPRET is set before the branch (and triton) is imported here.
        """
        if self._runtime is None:
            os.environ.setdefault(FP_FUSION_ENV, "1")
            if not interpreter_forced():
                import torch

                if torch.cuda.is_available():
                    self._runtime = TritonDeviceRuntime()
                    return self._runtime
            why = f"${INTERPRET_ENV}=1 was set" if interpreter_forced() else "no GPU visible to torch in the worker"
            os.environ[INTERPRET_ENV] = "1"
            self._runtime = TritonInterpreterRuntime(why)
        return self._runtime

    def load(self, artifact: Artifact, params: Sequence[Param]) -> TritonLoaded:
        contract = TritonContract.read(artifact.path)
        spec = importlib.util.spec_from_file_location(f"dcuopt_triton_{artifact.key}", artifact.source)
        if spec is None or spec.loader is None:
            raise CaseError(f"{artifact.source} cannot be imported as a Python module.")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        launcher = getattr(module, "solve", None)
        if not callable(launcher):
            raise CaseError(f"{artifact.source}: `solve` is not callable; define "
                            f"`def solve({', '.join(contract.launcher)})` that launches the @triton.jit kernels.")
        return TritonLoaded(launcher, contract)

    # ----- ISA (pytest side; no device) -------------------------------------------------
    def isa_dump(self, artifact: Artifact) -> IsaDump:
        target, where = target_for(self.arch)
        key = (artifact.key, target.label if target else where)
        if key not in self._dumps:
            self._dumps[key] = dump_triton_artifact(artifact, target, where)
        return self._dumps[key]

    def disassemble(self, artifact: Artifact) -> dict[str, str]:
        return dict(self.isa_dump(artifact).functions)

    def resource_usage(self, artifact: Artifact) -> dict[str, ResourceUsage]:
        return dict(self.isa_dump(artifact).resources)


class TritonLoaded:
    """A loaded launcher and its contract; `bind` lays out guarded buffers for one call."""

    def __init__(self, launcher: Callable[..., Any], contract: TritonContract) -> None:
        self.launcher = launcher
        self.contract = contract

    def bind(self, spec: BindSpec, runtime: Runtime) -> TritonBinding:
        shapes = dict(spec.shapes) or self.contract.shapes_at(spec.dims)
        params = self.contract.params(spec.dims)
        call = LauncherCall(self.launcher, params, shapes)
        return TritonBinding(CAbiBinding(params, replace(spec, shapes=shapes), runtime, call), shapes)


class LauncherCall:
    """`solve(**params)` from the C ABI binding's positional arguments: each buffer argument is a guarded
    storage (a `DeviceBuffer`), passed as a typed, shaped view of its first `count` elements."""

    def __init__(self, launcher: Callable[..., Any], params: Sequence[Param],
                 shapes: dict[str, tuple[int, ...]]) -> None:
        self.launcher = launcher
        self.params = tuple(params)
        self.shapes = shapes
        self._views: dict[int, Any] = {}

    def __call__(self, *args: Any) -> None:
        kwargs = {param.name: self._view(param, arg) if param.pointer else arg
                  for param, arg in zip(self.params, args, strict=True)}
        self.launcher(**kwargs)

    def _view(self, param: Param, buffer: DeviceBuffer) -> Any:
        # One view per storage (its address never changes): the launcher sees the same tensor every call.
        found = self._views.get(id(buffer))
        if found is None:
            import torch

            count = numel(self.shapes[param.name])
            found = buffer.tensor.view(getattr(torch, param.dtype))[:count].view(self.shapes[param.name])
            self._views[id(buffer)] = found
        return found


class TritonBinding:
    """The C ABI binding's buffers and checks; snapshots hold each buffer in its declared shape
    (the reference receives tensors of those shapes)."""

    def __init__(self, inner: CAbiBinding, shapes: dict[str, tuple[int, ...]]) -> None:
        self.inner = inner
        self.shapes = shapes

    @property
    def nbytes(self) -> int:
        return self.inner.nbytes

    def launch(self) -> None:
        self.inner.launch()

    def reset(self) -> None:
        self.inner.reset()

    def scramble_outputs(self, seed: int) -> None:
        self.inner.scramble_outputs(seed)

    def snapshot(self) -> Snapshot:
        found = self.inner.snapshot()
        for arrays in (found.inputs, found.outputs):
            for name, array in arrays.items():
                if name in self.shapes:
                    arrays[name] = array.reshape(self.shapes[name])
        return found


class TritonInterpreterRuntime(Runtime):
    """torch CPU tensors for the Triton interpreter; host-clock timing, labelled not representative."""

    device_name = "cpu (Triton interpreter)"

    def __init__(self, why: str) -> None:
        import torch

        self.torch = torch
        self.why = why

    def upload(self, array: np.ndarray) -> DeviceBuffer:
        raw = np.ascontiguousarray(array).view(np.uint8).copy()
        return DeviceBuffer(self.torch.from_numpy(raw), array.dtype)

    def download(self, buffer: DeviceBuffer) -> np.ndarray:
        return buffer.tensor.numpy().view(buffer.dtype).copy()

    def write(self, buffer: DeviceBuffer, array: np.ndarray) -> None:
        buffer.tensor.copy_(self.torch.from_numpy(np.ascontiguousarray(array).view(np.uint8).copy()))

    def pointer(self, buffer: DeviceBuffer) -> DeviceBuffer:  # type: ignore[override]
        return buffer  # a launcher takes tensors, not addresses: LauncherCall turns the storage into a typed view

    def synchronize(self) -> None:
        return None  # the interpreter runs synchronously

    def measure(self, launch: Callable[[], Any], policy: TimingPolicy) -> Samples:
        samples = measure_host(launch, policy)
        return replace(samples, timer=INTERPRETER_TIMER,
                       extra={**samples.extra, "triton_mode": "interpreter", "representative": False,
                              "note": INTERPRETER_NOTE})

    def describe(self) -> dict[str, Any]:
        return {"device": self.device_name, "triton_mode": "interpreter", "triton": triton_version(),
                "torch": self.torch.__version__, "timer": INTERPRETER_TIMER, "representative": False,
                "note": INTERPRETER_NOTE, "why": self.why}


class TritonDeviceRuntime(TorchDeviceRuntime):
    """The shared device runtime; buffers are handed to the launcher as tensors instead of raw addresses."""

    def pointer(self, buffer: DeviceBuffer) -> DeviceBuffer:  # type: ignore[override]
        return buffer

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "triton_mode": "compiled", "triton": triton_version()}
