"""`python`: torch kernels through the seed's `setup(**dims, seed)` / `run_kernel(**inputs)` contract. setup() says
which tensors there are and which are outputs; the values of the inputs always come from the harness."""
from __future__ import annotations

import importlib.util
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..case.buffers import GUARD_ELEMENTS, numel, poison_value
from ..case.cabi import Param
from ..errors import CaseError
from ..timing.host import between_calls, measure_host
from ..timing.policy import Samples, TimingPolicy
from .base import Artifact, Availability, Capability, Runtime, Toolchain
from .binding import BindSpec, Snapshot, draw_layout
from .cache import BuildCache


class PythonToolchain(Toolchain):
    name = "python"
    extensions = (".py",)
    isa_family = "none"
    c_abi = False
    preload_modules = ("torch",)  # TorchRuntime
    checks_timed_calls = True  # host timing (timing/host.py) brackets every call

    def availability(self) -> Availability:
        if importlib.util.find_spec("torch") is None:
            return Availability(Capability.UNAVAILABLE, "torch is not installed: `pip install torch==2.13.0`")
        return Availability(Capability.RUN, "torch kernels via setup()/run_kernel()")

    def identity(self) -> str:
        return f"python {sys.version.split()[0]}"

    def build(self, source: Path, cache: BuildCache) -> Artifact:
        # Nothing to compile; the key still pins the exact source the results came from.
        key = cache.key(source, self.name, self.identity(), None, ())
        return Artifact(self.name, source, source, None, "", "", key, True, 0.0)

    def load(self, artifact: Artifact, params: Sequence[Param]) -> Any:
        spec = importlib.util.spec_from_file_location(f"dcuopt_kernel_{artifact.key}", artifact.path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for name in ("setup", "run_kernel"):
            if not callable(getattr(module, name, None)):
                raise CaseError(f"{artifact.path}: a Python kernel must define `{name}(**kwargs)` "
                                "(setup(**dims, seed=...) -> {'inputs': {...}, 'outputs': [...]}; "
                                "run_kernel(**inputs)).")
        return PythonLoaded(module)

    def runtime(self) -> Runtime:
        return TorchRuntime()


class PythonLoaded:
    def __init__(self, module: Any) -> None:
        self.module = module

    def bind(self, spec: BindSpec, runtime: Runtime) -> PythonBinding:
        return PythonBinding(self.module, spec, runtime)


class GuardedOutput:
    """An output tensor placed at the start of a larger, poisoned allocation, so a write past its end shows.

    The kernel gets a view with the shape and strides setup() gave; GUARD_ELEMENTS poisoned elements follow the
    view's last element in the same storage (as the C ABI bindings put a guard zone after every buffer).
    """

    def __init__(self, name: str, original: Any) -> None:
        import torch

        self.name = name
        self.extent = _extent(original)  # the guard starts right after the view's last element
        self.storage = torch.empty(self.extent + GUARD_ELEMENTS, dtype=original.dtype, device=original.device)
        self.storage.fill_(_poison(original.dtype))
        self.view = torch.as_strided(self.storage, original.shape, original.stride(), 0)
        self.view.copy_(original)
        self.pristine_guard = self.storage[self.extent:].clone()

    def restore_guard(self) -> None:
        self.storage[self.extent:].copy_(self.pristine_guard)

    def overrun(self) -> str | None:
        """The problem line when the guard changed (bitwise: NaN poison must compare equal to itself)."""
        import torch

        now = self.storage[self.extent:].contiguous().view(torch.uint8)
        changed = torch.nonzero(now != self.pristine_guard.contiguous().view(torch.uint8))
        if changed.numel() == 0:
            return None
        first = int(changed[0, 0]) // self.storage.element_size()
        return (f"wrote past the end of buffer {self.name!r} ({self.extent} elements): element "
                f"{self.extent + first} changed")


def _extent(tensor: Any) -> int:
    """Storage elements a tensor's view spans from its first element (strides may leave gaps or repeat)."""
    if tensor.numel() == 0:
        return 0
    return 1 + sum((size - 1) * stride for size, stride in zip(tensor.shape, tensor.stride(), strict=True))


def _poison(dtype: Any) -> Any:
    """The value unwritten elements and guards hold: NaN for floating dtypes, a sentinel for the others."""
    if dtype.is_floating_point or dtype.is_complex:
        return float("nan")
    name = str(dtype).removeprefix("torch.")
    try:
        value = poison_value(name)
    except TypeError:
        raise CaseError(f"an output tensor has dtype {name}, which the python toolchain cannot poison; use a float, "
                        "integer or bool tensor for outputs.") from None
    return value.item() if isinstance(value, np.generic) else value


class PythonBinding:
    """setup() lays out the tensors; the harness fills every input tensor with values it draws (`draw_layout`, from
    the seed the pytest process chose), and the dims' scalars with the dims. Outputs are NaN-poisoned before every
    checked call and followed by a guard zone. A snapshot carries the outputs and the layout, not the input values:
    the pytest process draws those itself."""

    def __init__(self, module: Any, spec: BindSpec, runtime: Runtime) -> None:
        import torch

        self.runtime = runtime
        # seed=0: setup() lays out the tensors; the values come from the harness, and their seed stays with it.
        made = module.setup(**dict(spec.dims), seed=0)
        if not isinstance(made, dict) or "inputs" not in made or "outputs" not in made:
            raise CaseError("setup() must return {'inputs': {name: tensor|value}, 'outputs': [names]}; "
                            f"it returned {type(made).__name__}")
        self.inputs: dict[str, Any] = dict(made["inputs"])
        self.output_names = list(made["outputs"])
        missing = [name for name in self.output_names if name not in self.inputs]
        if missing:
            raise CaseError(f"setup() lists outputs {missing} that are not in its 'inputs' dict "
                            f"({sorted(self.inputs)}); "
                            "every output must be a tensor passed to run_kernel, listed by name in 'outputs'.")
        for name in self.inputs:
            if name in spec.dims and name not in self.output_names:
                self.inputs[name] = spec.dims[name]  # the dims say what N is, not setup()
        self.layout = {name: (_dtype_name(value), tuple(value.shape)) for name, value in self.inputs.items()
                       if isinstance(value, torch.Tensor) and name not in self.output_names}
        self._domains = dict(spec.domains)
        self._fill(draw_layout(self.layout, spec.seed, self._domains))
        # The kernel writes into views of guarded allocations instead of setup()'s own tensors.
        self.guards = {name: GuardedOutput(name, self.inputs[name]) for name in self.output_names
                       if isinstance(self.inputs[name], torch.Tensor)}
        self.inputs.update({name: guard.view for name, guard in self.guards.items()})
        self.pristine = {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in self.inputs.items()}
        self._run: Callable[..., Any] = module.run_kernel

    def _fill(self, values: dict[str, np.ndarray]) -> None:
        """Write drawn values (storage arrays) into the input tensors, in place: the kernel keeps its tensors."""
        import torch

        for name, array in values.items():
            target = self.inputs[name]
            source = torch.from_numpy(np.ascontiguousarray(array)).view(target.dtype).reshape(target.shape)
            target.copy_(source)

    @property
    def nbytes(self) -> int:
        """Bytes of the tensors of one call."""
        import torch

        return int(sum(v.numel() * v.element_size() for v in self.inputs.values() if isinstance(v, torch.Tensor)))

    @property
    def input_sizes(self) -> dict[str, int]:
        return {name: int(numel(shape)) for name, (_, shape) in self.layout.items()}

    @property
    def rotates_outputs(self) -> bool:
        """Whether `prepare_call` rewrites a tensor the call writes (an in/out tensor)."""
        return any(name in self.output_names for name in self.layout)

    def reset(self) -> None:
        import torch

        for guard in self.guards.values():
            guard.restore_guard()
        for name, value in self.pristine.items():
            if isinstance(value, torch.Tensor):
                target = self.inputs[name]
                if name in self.output_names and target.is_floating_point():
                    target.fill_(float("nan"))
                else:
                    target.copy_(value)

    def reset_inputs(self) -> None:
        for name in self.layout:
            self.inputs[name].copy_(self.pristine[name])

    def rebind(self, spec: BindSpec) -> None:
        """Another seed's inputs in the same tensors (a kernel keeping results per tensor sees new values)."""
        self._fill(draw_layout(self.layout, spec.seed, self._domains))
        for name in self.layout:
            self.pristine[name] = self.inputs[name].clone()

    def prepare_call(self, offsets: dict[str, int]) -> None:
        """Before a timed call: every input rotated by its offset from its starting values (see
        `binding.roll_offsets`)."""
        import torch

        for name, offset in offsets.items():
            start = self.pristine[name].reshape(-1)
            self.inputs[name].reshape(-1).copy_(torch.cat([start[offset:], start[:offset]]) if offset else start)

    def scramble_outputs(self, seed: int) -> None:
        """Finite junk in the outputs, as after an earlier call (see `CAbiBinding.scramble_outputs`)."""
        import torch

        generator = torch.Generator().manual_seed(seed & 0x7FFFFFFFFFFFFFFF)
        for name in self.output_names:
            target = self.inputs[name]
            if isinstance(target, torch.Tensor):
                junk = torch.rand(target.shape, generator=generator) * 100
                target.copy_(junk.to(target.dtype) if target.is_floating_point() else junk.to(torch.int64))

    def launch(self) -> None:
        self._run(**self.inputs)

    def snapshot(self) -> Snapshot:
        import torch

        self.runtime.synchronize()
        inputs: dict[str, np.ndarray] = {}
        outputs: dict[str, np.ndarray] = {}
        dtypes: dict[str, str] = {}
        for name, value in self.inputs.items():
            if name in self.layout:
                dtypes[name] = self.layout[name][0]  # its values: drawn by the pytest process itself
            elif isinstance(value, torch.Tensor):
                dtypes[name] = _dtype_name(value)
                host = value.detach().to("cpu")
                array = (host.float() if host.dtype == torch.bfloat16 else host).numpy().copy()
                if dtypes[name] == "bfloat16":
                    dtypes[name] = "float32"
                (outputs if name in self.output_names else inputs)[name] = array
            else:
                inputs[name] = np.asarray(value)
                dtypes[name] = str(np.asarray(value).dtype)
        problems = [line for line in (guard.overrun() for guard in self.guards.values()) if line]
        return Snapshot(inputs, outputs, dtypes, problems, layout=dict(self.layout))


def _dtype_name(tensor: Any) -> str:
    name = str(tensor.dtype).removeprefix("torch.")
    if name != "bfloat16" and (name not in np.sctypeDict or np.dtype(name).kind not in "fiub"):
        raise CaseError(f"setup() returned an input tensor of dtype {name}, for which the harness cannot draw values; "
                        "use a float, integer or bool tensor")
    return name


class TorchRuntime(Runtime):
    """Synchronises torch's device (if any); host clock timing with a sync after each call."""

    device_name = "torch"

    def upload(self, array: np.ndarray) -> Any:
        return array

    def download(self, buffer: Any) -> np.ndarray:
        return np.asarray(buffer)

    def write(self, buffer: Any, array: np.ndarray) -> None:
        np.copyto(buffer, array)

    def pointer(self, buffer: Any) -> int:
        raise TypeError("Python kernels receive tensors, not pointers")

    def synchronize(self) -> None:
        import torch

        if torch.cuda.is_available():
            torch.cuda.synchronize()

    def measure(self, launch: Callable[[], Any], policy: TimingPolicy) -> Samples:
        def call() -> None:
            launch()
            self.synchronize()

        return measure_host(call, policy, between_calls(launch))

    def describe(self) -> dict[str, Any]:
        import torch

        return {"device": torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu",
                "torch": torch.__version__, "timer": "host perf_counter_ns + synchronize",
                "at": time.strftime("%Y-%m-%dT%H:%M:%S")}
