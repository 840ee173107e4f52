"""`dcuopt triton to-case`: a captured Inductor kernel as a harness case (docs/usage.md), so a generated kernel
gets the same correctness and benchmark tests as a hand-written one.

Written into the case folder:
* `inductor_kernel.py`: the captured module, unchanged;
* `kernel.triton.py`: a launcher `solve(<the kernel's arguments>)` that launches the kernel's @triton.jit function
  with the config Inductor runs (`capture.inductor_choice`: the coordinate-descent winner when coordinate descent
  ran, from the capture or its Inductor log, else the autotuning best), on the grid Inductor uses for pointwise
  and reduction kernels (x/y/z numel over XBLOCK/YBLOCK/ZBLOCK). Template kernels (triton_tem_*, GEMMs) compute
  their grid in the template: they are refused, with the reason;
* `ref.py`: every pointer argument is a flat buffer of the captured storage size (the kernel's index arithmetic
  carries the strides Inductor compiled in), `dtypes` as captured, outputs = Inductor's `out_ptr*` and
  `in_out_ptr*` arguments, the scalars as dims; `reference` is the function named by `--reference FILE:FUNC`
  (the eager computation the kernel replaces, an independent oracle), or, without it, one that fails and says
  what to write;
* `dims.json`: the captured scalar arguments.

A module Inductor generated for a GPU calls `triton_helpers.set_driver_to_gpu()` when it is imported, which raises
"Could not find an active GPU backend" on a machine without one: ref.py ends with `GPU_GUARD`, a `pytestmark` that
imports the module once in a subprocess and skips the case with Inductor's words when that is the error (a CPU
cannot run the generated module, which is not a failure of the kernel); a module that imports runs as before.
"""
from __future__ import annotations

import math
import re
import shutil
from pathlib import Path
from typing import Any

from .capture import inductor_choice, log_entries
from .flow_files import FlowError, read_json

GPU_GUARD = '''

# Inductor's generated module may need a GPU backend when it is imported (`triton_helpers.set_driver_to_gpu()`):
# without one every test would fail on that, not on the kernel. Imported once in a subprocess, so pytest itself never
# selects a driver; any other import error is left to the tests to report.
import subprocess as _subprocess
import sys as _sys
from pathlib import Path as _Path

import pytest as _pytest

_NO_GPU = "Could not find an active GPU backend"
_probe = _subprocess.run([_sys.executable, "-c", "import importlib.util as u, sys; s = u.spec_from_file_location("
                          "'inductor_kernel', sys.argv[1]); s.loader.exec_module(u.module_from_spec(s))",
                          str(_Path(__file__).with_name("inductor_kernel.py"))], capture_output=True, text=True,
                         timeout=300)
pytestmark = [_pytest.mark.skipif(_NO_GPU in _probe.stderr, reason="the captured Inductor module cannot be imported "
                                  "here: RuntimeError: " + _NO_GPU + " (it runs on a GPU; `dcuopt triton run` "
                                  "re-times kernels there)")]
'''
GRID_AXES = (("xnumel", "XBLOCK"), ("ynumel", "YBLOCK"), ("znumel", "ZBLOCK"))
_OUTPUT_RE = re.compile(r"^(?:in_)?out_ptr\d*$")
_INPUT_RE = re.compile(r"^(?:in_ptr|in_out_ptr)\d*$")


def storage_elements(arg: dict[str, Any]) -> int:
    """Elements a tensor argument spans from its pointer: the largest index its strides reach, plus one."""
    if any(size == 0 for size in arg["shape"]):
        return 1
    return 1 + sum((size - 1) * abs(stride) for size, stride in zip(arg["shape"], arg["stride"], strict=True))


def grid_expression(record: dict[str, Any], entry: dict[str, Any] | None = None) -> str:
    kwargs = (entry or record["best"])["kwargs"]
    names = {a["name"] for a in record["args"]}
    parts = [f"triton.cdiv({numel}, {kwargs.get(block, 1)})" for numel, block in GRID_AXES if numel in names]
    if not parts:
        raise FlowError(f"to-case: {record['kernel']} has no xnumel/ynumel/znumel argument, so its grid is not "
                        "Inductor's pointwise/reduction grid; write the case's solve() by hand")
    return f"({', '.join(parts)},)"


def grid_values(record: dict[str, Any], entry: dict[str, Any]) -> tuple[int, ...]:
    """The grid of `grid_expression` at the captured scalar values."""
    scalars = {a["name"]: a["value"] for a in record["args"] if "shape" not in a}
    return tuple(-(-int(scalars[numel]) // int(entry["kwargs"].get(block, 1)))
                 for numel, block in GRID_AXES if numel in scalars)


def launcher(record: dict[str, Any], choice: dict[str, Any] | None = None) -> str:
    choice = choice or {"entry": record["best"], "source": "the autotuning best"}
    best = choice["entry"]
    params = ", ".join(a["name"] for a in record["args"])
    figure = f"; {best['ms']:.4f} ms in Inductor's autotuning benchmark" if best.get("ms") is not None else ""
    return f'''"""{record['kernel']} as TorchInductor generated it, launched with the config Inductor runs
({best['config']}: {choice['source']}{figure})."""
import importlib.util
from pathlib import Path

import triton

_spec = importlib.util.spec_from_file_location("inductor_kernel", Path(__file__).with_name("inductor_kernel.py"))
_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_module)
KERNEL = _module.{record['kernel']}.fn  # the @triton.jit function under Inductor's autotuner
CONFIG = {best['kwargs']!r}


def solve({params}):
    KERNEL[{grid_expression(record, best)}]({params}, **CONFIG,
        num_warps={best['num_warps']}, num_stages={best['num_stages']})
'''


def dtype_name(text: str) -> str:
    return text.replace("torch.", "")


def reference_block(reference: str | None, out: Path) -> str:
    if reference is None:
        return ('def reference(**kwargs):\n    raise NotImplementedError(\n        "write the eager computation this '
                'kernel replaces (an independent oracle), or make the case again with "\n        "`dcuopt triton '
                'to-case ... --reference FILE.py:FUNCTION`")\n')
    path_text, _, function = reference.rpartition(":")
    source = Path(path_text)
    if not source.is_file() or not function:
        raise FlowError(f"to-case: --reference {reference!r} must be FILE.py:FUNCTION with an existing file")
    shutil.copy2(source, out / "oracle.py")
    return (f"# the oracle: {function}() of {source.name}, copied beside this file as oracle.py\n"
            "import importlib.util\nfrom pathlib import Path\n\n"
            '_spec = importlib.util.spec_from_file_location("oracle", Path(__file__).with_name("oracle.py"))\n'
            "_oracle = importlib.util.module_from_spec(_spec)\n_spec.loader.exec_module(_oracle)\n"
            f"reference = _oracle.{function}\n")


def to_case(capture: Path, out: Path, reference: str | None = None) -> dict[str, Any]:
    record = read_json(capture / "capture.json", "the capture record")
    if record["kernel"].startswith("triton_tem_"):
        raise FlowError(f"to-case: {record['kernel']} is a template kernel (a GEMM or similar): its grid is computed "
                        "inside the template, so no launcher can be derived; write the case's solve() by hand")
    if record.get("best") is None:
        raise FlowError(f"to-case: {capture}/capture.json has no best config (no config was timed); capture again")
    out.mkdir(parents=True, exist_ok=True)
    tensors = [a for a in record["args"] if "shape" in a]
    scalars = {a["name"]: a["value"] for a in record["args"] if "shape" not in a}
    shapes = {a["name"]: (storage_elements(a) + a.get("storage_offset", 0),) for a in tensors}
    dtypes = {a["name"]: dtype_name(a["dtype"]) for a in tensors}
    outputs = [a["name"] for a in tensors if _OUTPUT_RE.match(a["name"])]
    inputs = {a["name"]: ("normal", 0, 1) for a in tensors if _INPUT_RE.match(a["name"])}
    if not outputs:
        raise FlowError(f"to-case: {record['kernel']} has no out_ptr/in_out_ptr argument; nothing to compare")
    choice = inductor_choice(record, log_entries(capture.parent))
    shutil.copy2(capture / "kernel.py", out / "inductor_kernel.py")
    (out / "kernel.triton.py").write_text(launcher(record, choice))
    (out / "dims.json").write_text(_json(scalars) + "\n")
    ref = [f'"""Case made by `dcuopt triton to-case` from the capture of {record["kernel"]}."""',
           reference_block(reference, out), f"shapes = {shapes!r}", f"dtypes = {dtypes!r}",
           f"outputs = {outputs!r}", f"inputs = {inputs!r}",
           f"dim_ranges = {{name: (value, value) for name, value in {scalars!r}.items()}}  # compiled for these",
           f"\n\ndef bytes_moved(**dims):\n    return {record.get('footprint_bytes', 0)}"]
    (out / "ref.py").write_text("\n".join(ref) + "\n" + GPU_GUARD)
    return {"case": str(out), "kernel": record["kernel"], "buffers": shapes, "outputs": outputs, "dims": scalars,
            "reference": reference or "missing: write reference() in ref.py",
            "elements": {n: math.prod(s) for n, s in shapes.items()}, "config": choice["entry"]["config"],
            "config_source": choice["source"]}


def _json(value: Any) -> str:
    import json

    return json.dumps(value, indent=2)
