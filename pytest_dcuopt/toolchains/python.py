"""`python`: torch kernels through the seed's `setup(**dims, seed)` / `run_kernel(**inputs)` contract."""
from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ..case.cabi import Param
from ..errors import CaseError
from ..timing.host import measure_host
from ..timing.policy import Samples, TimingPolicy
from .base import Artifact, Availability, Capability, Runtime, Toolchain
from .binding import BindSpec, Snapshot
from .cache import BuildCache


class PythonToolchain(Toolchain):
    name = "python"
    extensions = (".py",)
    isa_family = "none"
    c_abi = False

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
                                "(setup(**dims, seed=...) -> {'inputs': {...}, 'outputs': [...]}; run_kernel(**inputs)).")
        return PythonLoaded(module)

    def runtime(self) -> Runtime:
        return TorchRuntime()


class PythonLoaded:
    def __init__(self, module: Any) -> None:
        self.module = module

    def bind(self, spec: BindSpec, runtime: Runtime) -> PythonBinding:
        return PythonBinding(self.module, spec, runtime)


class PythonBinding:
    """setup() makes the inputs; outputs are NaN-poisoned before every call."""

    def __init__(self, module: Any, spec: BindSpec, runtime: Runtime) -> None:
        import torch

        self.runtime = runtime
        made = module.setup(**dict(spec.dims), seed=spec.seed)
        if not isinstance(made, dict) or "inputs" not in made or "outputs" not in made:
            raise CaseError("setup() must return {'inputs': {name: tensor|value}, 'outputs': [names]}; "
                            f"it returned {type(made).__name__}")
        self.inputs: dict[str, Any] = dict(made["inputs"])
        self.output_names = list(made["outputs"])
        self.pristine = {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in self.inputs.items()}
        self._run: Callable[..., Any] = module.run_kernel

    @property
    def nbytes(self) -> int:
        """Bytes of the tensors of one call."""
        import torch

        return int(sum(v.numel() * v.element_size() for v in self.inputs.values() if isinstance(v, torch.Tensor)))

    def reset(self) -> None:
        import torch

        for name, value in self.pristine.items():
            if isinstance(value, torch.Tensor):
                target = self.inputs[name]
                if name in self.output_names and target.is_floating_point():
                    target.fill_(float("nan"))
                else:
                    target.copy_(value)

    def launch(self) -> None:
        self._run(**self.inputs)

    def snapshot(self) -> Snapshot:
        import torch

        self.runtime.synchronize()
        inputs, outputs, dtypes = {}, {}, {}
        for name, value in self.inputs.items():
            if isinstance(value, torch.Tensor):
                dtypes[name] = str(value.dtype).removeprefix("torch.")
                host = value.detach().to("cpu")
                array = (host.float() if host.dtype == torch.bfloat16 else host).numpy().copy()
                if dtypes[name] == "bfloat16":
                    dtypes[name] = "float32"
                (outputs if name in self.output_names else inputs)[name] = array
            else:
                inputs[name] = np.asarray(value)
                dtypes[name] = str(np.asarray(value).dtype)
        return Snapshot(inputs, outputs, dtypes, [])


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

        return measure_host(call, policy)

    def describe(self) -> dict[str, Any]:
        import torch

        return {"device": torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu",
                "torch": torch.__version__, "timer": "host perf_counter_ns + synchronize",
                "at": time.strftime("%Y-%m-%dT%H:%M:%S")}
