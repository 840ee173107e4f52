"""Compile a Triton branch's kernels ahead of time for a named target, with no GPU (run as a subprocess).

`python -m pytest_dcuopt.toolchains.triton_aot <contract.json> <target> <out-dir>`, started by
toolchains/triton_isa.py in a fresh interpreter (so the pytest process never imports triton, and a
leaked TRITON_INTERPRET=1 or a crash in the compiler cannot reach it).

How: Triton's own JIT front end does the work, so each kernel gets exactly the specialisation a launch
would give it (argument types, `tt.divisibility` for 16-byte aligned pointers and multiples of 16,
`tt.pointer_range = 32` for tensors under 2 GB on AMD, constexprs). The active driver is replaced by
one that only names the target (no device), `JITFunction.run` is made to compile without launching
(`warmup=True`), and the branch's launcher `solve(**params)` is called once on torch CPU tensors of the
case's default dims, laid out like the worker's (guard zone after each buffer). Every compiled kernel's
stages (ttir, ttgir, llir, amdgcn + hsaco / ptx + cubin, and SASS from Triton's cuobjdump) and metadata go
to <out-dir>, with manifest.json listing them. A compile failure exits non-zero with the compiler's
diagnostics on stderr (e.g. `error: unsupported target: 'gfx936'`).
"""
from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Any

from ..case.buffers import numel
from .cabi_binding import guard_elements
from .triton_contract import TritonContract

MANIFEST = "manifest.json"
#: Stages written as text; the binaries (hsaco, cubin) are written as bytes.
RECORDED_ENV = ("AMDGCN_USE_BUFFER_OPS", "TRITON_DEFAULT_FP_FUSION", "TRITON_INTERPRET", "TRITON_CACHE_DIR")
#: What the record keeps of each compiled kernel's metadata.
KERNEL_METADATA = ("num_warps", "num_stages", "num_ctas", "shared", "warp_size")


def parse_target(label: str) -> tuple[str, str | int, int]:
    """`hip:gfx942` -> ("hip", "gfx942", 64); `cuda:90` -> ("cuda", 90, 32)."""
    backend, _, arch = label.partition(":")
    if backend == "cuda":
        return backend, int(arch), 32
    return backend, arch, 32 if arch.startswith("gfx1") else 64


def main(argv: list[str]) -> int:
    contract_path, label, out = Path(argv[0]), argv[1], Path(argv[2])
    contract = TritonContract.read(contract_path)
    out.mkdir(parents=True, exist_ok=True)
    os.environ.update(contract.env)  # a variant's environment (AMDGCN_USE_BUFFER_OPS), before triton reads it
    import torch
    import triton  # type: ignore[import-untyped]  # triton ships no type information
    from triton.backends.compiler import GPUTarget  # type: ignore[import-untyped]
    from triton.runtime.driver import driver  # type: ignore[import-untyped]
    from triton.runtime.jit import JITFunction  # type: ignore[import-untyped]

    backend, arch, warp_size = parse_target(label)
    driver.set_active(_target_only_driver(GPUTarget(backend, arch, warp_size), torch))
    compiled: list[Any] = []
    original_run = JITFunction.run

    def compile_only(self: Any, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
        kernel = original_run(self, *args, grid=grid, warmup=True, **kwargs)
        compiled.append(kernel)
        return kernel

    JITFunction.run = compile_only
    _launcher(contract)(**_arguments(contract, torch), **contract.options)
    if not compiled:
        print(f"{contract.source}: solve() launched no @triton.jit kernel (were they decorated with TRITON_INTERPRET=1 "
              "set, or launched through triton.autotune, which this AOT step does not handle yet?)", file=sys.stderr)
        return 2
    kernels = [_write_kernel(kernel, out, index, backend) for index, kernel in enumerate(compiled)]
    manifest = {"target": label, "triton": triton.__version__, "dims": contract.default_dims,
                "variant": contract.variant, "options": contract.options,
                "env": {name: os.environ.get(name) for name in RECORDED_ENV}, "kernels": kernels}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2, default=str) + "\n")
    return 0


def _target_only_driver(target: Any, torch: Any) -> Any:
    """A Triton driver that names `target` and has no device: enough for the JIT to compile, never to launch."""
    from triton.backends.driver import DriverBase  # type: ignore[import-untyped]

    class TargetOnlyDriver(DriverBase):  # type: ignore[misc]
        @classmethod
        def is_active(cls) -> bool:
            return False

        def map_python_to_cpp_type(self, ty: str) -> str:
            raise NotImplementedError("ahead-of-time compile only: nothing is launched")

        def get_current_target(self) -> Any:
            return target

        def get_active_torch_device(self) -> Any:
            return torch.device("cpu")

        def get_benchmarker(self) -> Any:
            raise NotImplementedError("ahead-of-time compile only: triton.autotune cannot benchmark here")

        def get_current_device(self) -> int:
            return 0

        def get_current_stream(self, device: Any = None) -> int:
            return 0

    return TargetOnlyDriver()


def _launcher(contract: TritonContract) -> Any:
    spec = importlib.util.spec_from_file_location("dcuopt_triton_aot_branch", contract.source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.solve


def _arguments(contract: TritonContract, torch: Any) -> dict[str, Any]:
    """The launcher's arguments at the default dims: uninitialised CPU tensors (never touched: nothing runs),
    each a view of a larger storage as in the worker, so pointer-range specialisation sees the same size."""
    dims = contract.default_dims
    shapes = contract.shapes_at(dims)
    arguments: dict[str, Any] = {}
    for param in contract.params(dims):
        if not param.pointer:
            arguments[contract.call_name(param.name)] = dims[param.name]
            continue
        dtype = getattr(torch, param.dtype)
        count = numel(shapes[param.name])
        storage = torch.empty(count + guard_elements(count, torch.empty((), dtype=dtype).element_size()), dtype=dtype)
        arguments[contract.call_name(param.name)] = storage[:count].view(shapes[param.name])
    return arguments


def _write_kernel(kernel: Any, out: Path, index: int, backend: str) -> dict[str, Any]:
    metadata = _plain(kernel.metadata._asdict() if hasattr(kernel.metadata, "_asdict") else vars(kernel.metadata))
    name = str(metadata.get("name", f"kernel{index}"))
    stem = f"{index:02d}_{name}"
    files: dict[str, str] = {}
    errors: list[str] = []
    for stage in kernel.asm.keys():
        try:
            content = kernel.asm[stage]
        except Exception as exc:
            errors.append(f"stage {stage}: {type(exc).__name__}: {exc}")
            continue
        path = out / f"{stem}.{stage}"
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(str(content))
        files[stage] = path.name
    if backend == "cuda" and "cubin" in files:
        cubin = out / files["cubin"]
        files.update(_cuobjdump("--dump-sass", cubin, out / f"{stem}.sass", "sass", errors))
        usage = out / f"{stem}.resource-usage"
        files.update(_cuobjdump("--dump-resource-usage", cubin, usage, "resource-usage", errors))
    source = kernel.src
    return {"name": name, "stem": stem, "metadata": metadata, "files": files, "errors": errors,
            "signature": _plain(getattr(source, "signature", {})),
            "constexprs": _plain(getattr(source, "constexprs", {})), "attrs": _plain(getattr(source, "attrs", {}))}


def _cuobjdump(flag: str, cubin: Path, out: Path, stage: str, errors: list[str]) -> dict[str, str]:
    """Triton's bundled cuobjdump on the cubin: `--dump-sass` (the listing isa/sass.py reads; Triton's own
    `asm["sass"]` is reformatted) or `--dump-resource-usage` (registers, shared, stack per function)."""
    import subprocess

    from triton import knobs

    try:
        tool = knobs.nvidia.cuobjdump.path
        result = subprocess.run([tool, flag, str(cubin)], capture_output=True, text=True, timeout=120)
    except Exception as exc:
        errors.append(f"cuobjdump {flag} could not run: {type(exc).__name__}: {exc}")
        return {}
    if result.returncode != 0:
        errors.append(f"cuobjdump {flag} failed (exit {result.returncode}): {result.stderr.strip()[-500:]}")
        return {}
    out.write_text(result.stdout)
    return {stage: out.name}


def _plain(value: Any) -> Any:
    """JSON-able copy: tuple keys (Triton's argument paths) become strings, other objects their repr."""
    if isinstance(value, dict):
        return {(",".join(map(str, k)) if isinstance(k, tuple) else str(k)): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return repr(value)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
