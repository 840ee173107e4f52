"""`triton`: Triton kernels (`kernel.triton.py`: `@triton.jit` kernels and a launcher `solve(**params)`).

Contract (toolchains/triton_contract.py): the launcher takes the case's buffers (ref.py `shapes`) as torch
tensors and its dims as Python scalars, by name; ref.py `outputs` says which buffers it writes (default:
the buffers not in `inputs`), `dtypes` their dtypes (default float32). Buffers are laid out as for a C
ABI kernel (`cabi_binding.CAbiBinding`): outputs NaN-poisoned before every call, a guard zone after every
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
import json
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from ..case.buffers import numel
from ..case.cabi import Param
from ..case.model import Branch
from ..errors import CaseError
from ..isa.model import IsaDump, ResourceUsage
from ..timing.host import measure_host
from ..timing.policy import Samples, TimingPolicy
from .base import Artifact, Availability, BranchUnavailable, Capability, Runtime, Toolchain
from .binding import BindSpec, Snapshot
from .build import cached_entry
from .cabi_binding import CAbiBinding
from .cache import BuildCache
from .probe import torch_build
from .torch_runtime import DeviceBuffer, TorchDeviceRuntime
from .triton_aot import KERNEL_METADATA
from .triton_contract import TRITON_SUFFIX, TritonContract, contract_for_build
from .triton_isa import compile_ahead, dump_triton_artifact, kernel_metadata, target_for
from .triton_variants import (
    VARIANT_MARK,
    check_against_launcher,
    declared_variants,
    split_variant_source,
    variant_named,
    variant_source,
)

CONTRACT_FILE = "contract.json"
INTERPRET_ENV = "TRITON_INTERPRET"
#: Triton 3.9 warns when this is unset and will change its default in 3.10: pin today's default, and record it.
FP_FUSION_ENV = "TRITON_DEFAULT_FP_FUSION"
#: On AMD, whether Triton may use buffer instructions; recorded with every build, set only by a variant's `env`.
BUFFER_OPS_ENV = "AMDGCN_USE_BUFFER_OPS"
INTERPRETER_TIMER = "host perf_counter_ns under the Triton interpreter (TRITON_INTERPRET=1)"
INTERPRETER_NOTE = ("interpreter timing: Triton's CPU interpreter emulating the kernel with numpy; NOT representative "
                    "of any GPU (use it only to see that timing runs)")
_TRUE = ("1", "true", "yes", "on")
_EXCEPTION_RE = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Failure)\b:?")


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
    preload_modules = ("torch",)  # not triton: TRITON_INTERPRET is decided in `runtime`, before its import

    def __init__(self, arch: str | None = None, extra_flags: Sequence[str] = ()) -> None:
        super().__init__(arch, extra_flags)
        self._runtime: Runtime | None = None
        self._dumps: dict[tuple[str, str], IsaDump] = {}
        self._probes: dict[tuple[str, str], dict[str, Any]] = {}

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

    @classmethod
    def expand_branches(cls, branch: Branch) -> Sequence[Branch]:
        """The branch (solve's defaults), then `<branch>@<variant>` for every variant its file declares."""
        try:
            variants = declared_variants(branch.source)
        except (CaseError, OSError):
            return (branch,)  # the bare branch's build reports the declaration's problem
        return (branch, *(Branch(f"{branch.name}{VARIANT_MARK}{v.name}", variant_source(branch.source, v.name))
                          for v in variants))

    def build(self, source: Path, cache: BuildCache) -> Artifact:
        """Nothing is compiled here (Triton compiles at launch): the build derives and stores the contract. A
        variant's build is compile-probed for the target it will run on; one the stack rejects raises
        BranchUnavailable with the compiler's reason."""
        import time

        started = time.perf_counter()
        real, name = split_variant_source(source)
        contract, inputs = contract_for_build(real, self.name)
        for declared in declared_variants(real):  # a bad declaration fails the bare branch too, naming the fix
            check_against_launcher(declared, contract.tunables, real)
        variant = variant_named(real, name) if name is not None else None
        if variant is not None:
            contract = replace(contract, variant=variant.name, options=dict(variant.options), env=dict(variant.env))
        settings = json.dumps({"variant": contract.variant, "options": contract.options, "env": contract.env},
                              sort_keys=True, default=str)
        key = cache.key(real, self.name, self.identity(), None, (f"contract:{inputs}", "contract-v3", settings))
        path, made = cached_entry(cache, key, CONTRACT_FILE, lambda staging: contract.write(staging / CONTRACT_FILE))
        log = f"outputs: {', '.join(contract.outputs)} ({contract.outputs_source})"
        binding = contract.binding
        artifact = Artifact(self.name, real, path, None, "", log, key, not made, time.perf_counter() - started,
                            details={"binding": binding.to_json()} if binding is not None else {})
        if variant is None:
            return artifact
        probe = self.probe(artifact)
        details = {**artifact.details, "variant": variant.to_json(), "env": recorded_env(variant.env),
                   "tunables": list(contract.tunables),
                   "probe": probe}
        if probe["outcome"] == "rejected":
            raise BranchUnavailable(f"variant {variant.name!r} of {real} is unavailable on {probe['target']}: the "
                                    f"compiler rejected it ({probe['reason']})", probe["command"], details)
        return replace(artifact, details=details, seconds=time.perf_counter() - started)

    def probe(self, artifact: Artifact) -> dict[str, Any]:
        """Compile the variant ahead of time for the target its kernels will be compiled for, before any test runs
        it: {"outcome": "compiled" | "rejected" | "not probed", ...}. Probed when the worker compiles (a GPU build
        of torch, the interpreter not forced) or `--dcuopt-arch` names a Triton target; the interpreter compiles
        nothing, so there is nothing to reject there."""
        target, where = target_for(self.arch)
        if target is None or (self.device_platform() is None and where != "--dcuopt-arch"):
            return {"outcome": "not probed", "target": None,
                    "reason": "kernels run in Triton's interpreter here, which compiles nothing; `--dcuopt-arch "
                              "gfx90a` (or a GPU) probes the compile for that target"}
        key = (artifact.key, target.label)
        if key not in self._probes:
            dump = IsaDump(target.family, target.isa_arch, "")
            folder, command = compile_ahead(artifact, target, dump)
            if folder is None or dump.errors:
                log = "\n".join(dump.errors)
                self._probes[key] = {"outcome": "rejected", "target": target.label, "command": command,
                                     "reason": compiler_reason(log), "log": log[-3000:]}
            else:
                self._probes[key] = {"outcome": "compiled", "target": target.label, "command": command,
                                     "kernels": kernel_metadata(folder)}
        return {**self._probes[key], "target_from": where}

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
        os.environ.update(contract.env)  # before the branch is imported and anything compiles
        spec = importlib.util.spec_from_file_location(f"dcuopt_triton_{artifact.key}", artifact.source)
        if spec is None or spec.loader is None:
            raise CaseError(f"{artifact.source} cannot be imported as a Python module.")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        launcher = getattr(module, "solve", None)
        if not callable(launcher):
            raise CaseError(f"{artifact.source}: `solve` is not callable; define "
                            f"`def solve({', '.join(contract.launcher)})` that launches the @triton.jit kernels.")
        if isinstance(self._runtime, TritonDeviceRuntime):
            self._runtime.kernel_module = module  # its compiled kernels' metadata goes into the record
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
        call = LauncherCall(self.launcher, params, shapes, self.contract.options, self.contract.launcher_names)
        return TritonBinding(CAbiBinding(params, replace(spec, shapes=shapes), runtime, call), shapes)


class LauncherCall:
    """`solve(**params)` from the C ABI binding's positional arguments: each buffer argument is a guarded
    storage (a `DeviceBuffer`), passed as a typed, shaped view of its first `count` elements."""

    def __init__(self, launcher: Callable[..., Any], params: Sequence[Param], shapes: dict[str, tuple[int, ...]],
                 options: Mapping[str, Any] | None = None, launcher_names: Mapping[str, str] | None = None) -> None:
        self.launcher = launcher
        self.params = tuple(params)
        self.launcher_names = dict(launcher_names or {})  # bound by position: the case's name -> the launcher's
        self.shapes = shapes
        self.options = dict(options or {})  # a variant's tunables (BLOCK, num_warps, hint switches)
        self._views: dict[int, Any] = {}

    def __call__(self, *args: Any) -> None:
        kwargs = {self.launcher_names.get(param.name, param.name): self._view(param, arg) if param.pointer else arg
                  for param, arg in zip(self.params, args, strict=True)}
        self.launcher(**kwargs, **self.options)

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

    def reset_inputs(self) -> None:
        self.inner.reset_inputs()

    def scramble_outputs(self, seed: int) -> None:
        self.inner.scramble_outputs(seed)

    def redraw_inputs(self, seed: int) -> None:
        self.inner.redraw_inputs(seed)

    def restore_inputs(self) -> None:
        self.inner.restore_inputs()

    def snapshot(self) -> Snapshot:
        found = self.inner.snapshot()
        # The pytest process has no C signature to draw a contract's inputs from: they travel (docs/security.md,
        # "Judging outputs")
        found.inputs.update(self.inner.input_values())
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
                "note": INTERPRETER_NOTE, "why": self.why, "triton_env": recorded_env({})}


class TritonDeviceRuntime(TorchDeviceRuntime):
    """The shared device runtime; buffers are handed to the launcher as tensors instead of raw addresses."""

    kernel_module: Any = None  # the loaded branch (set by `load`): its compiled kernels are described

    def pointer(self, buffer: DeviceBuffer) -> DeviceBuffer:  # type: ignore[override]
        return buffer

    def describe(self) -> dict[str, Any]:
        found = {**super().describe(), "triton_mode": "compiled", "triton": triton_version(),
                 "triton_env": recorded_env({})}
        kernels = compiled_kernels(self.kernel_module)
        return {**found, "triton_kernels": kernels} if kernels else found  # none before the first launch


def compiler_reason(log: str) -> str:
    """The compiler's own words from a failed compile's output: the exception line (with its location) and the
    message it ends with (`CompilationError: at 9:12: ... target doesn't provide conversion for this type.`),
    else the last line that says error, else the last line."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    raised = [i for i, line in enumerate(lines) if _EXCEPTION_RE.match(line)]
    if raised:
        head, last = lines[raised[-1]], lines[-1]
        return head if last == head else f"{head} ... {last}"
    errors = [line for line in lines if "error" in line.lower()]
    return (errors or lines or ["no output"])[-1]


def recorded_env(variant_env: Mapping[str, str]) -> dict[str, str]:
    """The Triton variables a build compiles under, as the record shows them: a variant's own settings, else the
    environment's, else the default (AMDGCN_USE_BUFFER_OPS: left to the stack, on in Triton 3.9; FP fusion: the
    `1` the worker pins)."""
    found = {BUFFER_OPS_ENV: os.environ.get(BUFFER_OPS_ENV, "unset (the stack's default; Triton 3.9: on)"),
             FP_FUSION_ENV: os.environ.get(FP_FUSION_ENV, "1")}
    return {**found, **variant_env}


def compiled_kernels(module: Any) -> list[dict[str, Any]]:
    """num_warps, num_stages, shared memory, registers and spills of every kernel the GPU compiled for the
    branch (`@triton.jit` functions of its module, read from Triton's in-memory kernel cache)."""
    if module is None:
        return []
    found: list[dict[str, Any]] = []
    try:
        for name, function in sorted(vars(module).items()):
            for caches in getattr(function, "device_caches", {}).values():
                for kernel in list(caches[0].values()):
                    meta = kernel.metadata
                    entry = {"kernel": name, **{k: getattr(meta, k, None) for k in KERNEL_METADATA}}
                    entry.update({k: getattr(kernel, k, None) for k in ("n_regs", "n_spills")})
                    found.append(entry)
    except Exception as exc:  # Triton's cache layout is internal: a version that differs must not break the run
        found.append({"unreadable": f"Triton's kernel cache could not be read ({type(exc).__name__}: {exc})"})
    return found
