"""`dcuopt triton run`: re-run one captured kernel on its captured inputs, timed by the harness's device timing.

The kernel is launched through Inductor's own launcher (the CachingAutotuner in the captured `kernel.py`), pinned
to one config (the capture's winner, or `--config N` from capture.json's list), so the grid is computed exactly as
in the model. Timing is `timing.device.measure_device` over `TorchBackend` (cold samples with the L2 flushed, the
launch hidden behind a delay kernel, the event cost removed): the same numbers a harness case gets, not a parse
of printed lines. A kernel that writes into an input (in_out_ptr) runs on its own result after the first call:
the time is right, the values are not checked (a replay has no reference; see to-case).
"""
from __future__ import annotations

import importlib.util
import json
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..timing.device import measure_device
from ..timing.policy import TimingPolicy
from .records import FlowError, read_json, write_json

RESULT = "run.json"


def load_module(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise FlowError(f"run: {path} cannot be loaded as a Python module; capture the kernel again")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pinned_config(autotuner: Any, entry: dict[str, Any]) -> Any:
    """The captured config as a triton.Config, taken from the autotuner's own list when it is there."""
    for config in autotuner.configs:
        if (dict(config.kwargs) == entry["kwargs"] and config.num_warps == entry["num_warps"]
                and config.num_stages == entry["num_stages"]):
            return config
    import triton  # type: ignore[import-untyped]

    return triton.Config(entry["kwargs"], num_warps=entry["num_warps"], num_stages=entry["num_stages"])


def arguments(record: dict[str, Any], inputs: dict[str, Any], torch: Any, device: Any) -> list[Any]:
    values = []
    for arg in record["args"]:
        if "shape" not in arg:
            values.append(arg["value"])
            continue
        saved = inputs[arg["name"]]
        tensor = torch.empty_strided(arg["shape"], arg["stride"], dtype=saved.dtype, device=device)
        tensor.copy_(saved)
        values.append(tensor)
    return values


def launcher(autotuner: Any, record: dict[str, Any], entry: dict[str, Any], args: list[Any], torch: Any,
             device: Any) -> tuple[Any, str]:
    """A callable that launches the kernel once: Inductor's own launcher pinned to the config, else (an Inductor
    whose launcher API differs) the @triton.jit function on Inductor's pointwise/reduction grid."""
    from .to_case import grid_values

    def inductor() -> None:
        autotuner.run(*args, stream=torch.cuda.current_stream(device).cuda_stream)

    try:
        inductor()
        torch.cuda.synchronize(device)
        return inductor, "Inductor's launcher (CachingAutotuner.run), pinned to the config"
    except Exception as exc:  # said in the result: which launch path was timed, and why
        problem = f"{type(exc).__name__}: {exc}"
    grid = grid_values(record, entry)
    options = {**entry["kwargs"], "num_warps": entry["num_warps"], "num_stages": entry["num_stages"]}

    def direct() -> None:
        autotuner.fn[grid](*args, **options)

    direct()
    torch.cuda.synchronize(device)
    return direct, f"the @triton.jit function on grid {grid} (Inductor's launcher failed: {problem})"


def replay(folder: Path, config_index: int | None = None, max_time_s: float = 2.0) -> dict[str, Any]:
    if not (folder / "capture.json").is_file():
        raise FlowError(f"{folder} is not a kernel's capture folder (no capture.json): those are DIR/<kernel>_<n>, "
                        "made by `dcuopt triton capture --out DIR -- python model.py`")
    record = read_json(folder / "capture.json", "the capture record")
    import torch

    from ..toolchains.torch_runtime import TorchBackend

    if not torch.cuda.is_available():
        raise FlowError("run: torch sees no GPU here; a captured kernel runs only on a GPU like the one it was "
                        "captured on (run this on that machine)")
    entry = record["best"] if config_index is None else record["configs"][config_index]
    module = load_module(folder / "kernel.py", f"dcuopt_captured_{record['folder']}")
    autotuner = getattr(module, record["kernel"])
    autotuner.configs = [pinned_config(autotuner, entry)]
    autotuner.launchers = []
    device = torch.device("cuda", torch.cuda.current_device())
    args = arguments(record, torch.load(folder / "inputs.pt"), torch, device)

    launch, launcher_used = launcher(autotuner, record, entry, args, torch, device)
    samples = measure_device([launch], TimingPolicy(max_time_s=max_time_s, side_figures=False), TorchBackend(torch,
                                                                                                            device))
    median_ms = statistics.median(samples.seconds) * 1e3
    result = {"kernel": record["kernel"], "folder": str(folder), "config": entry["config"],
              "autotune_ms": entry["ms"], "median_ms": median_ms, "samples": len(samples.seconds),
              "timer": samples.timer, "mode": samples.mode, "stop_reason": samples.stop_reason,
              "quality": samples.extra.get("quality"), "device": torch.cuda.get_device_name(device),
              "footprint_gbps": record["footprint_bytes"] / (median_ms * 1e-3) / 1e9 if median_ms > 0 else None,
              "launcher": launcher_used, "correctness": record.get("correctness")}
    write_json(folder / RESULT, result)
    return result


def describe(result: dict[str, Any]) -> list[str]:
    return [f"{result['kernel']} on {result['device']}: median {result['median_ms']:.4f} ms over {result['samples']} "
            f"{result['mode']} samples ({result['timer']}; quality {result['quality']}); autotuning measured "
            f"{result['autotune_ms']:.4f} ms for {result['config']}",
            f"footprint rate {result['footprint_gbps']:.1f} GB/s (tensor bytes over time; not HBM traffic)",
            f"values not checked: {result['correctness']}"]


def main(argv: Sequence[str]) -> int:
    folder = Path(argv[0])
    try:
        result = replay(folder)
    except FlowError as exc:
        print(f"run: {exc}", file=sys.stderr)
        return 2
    print("\n".join(describe(result)))
    print(json.dumps({"json": str(folder / RESULT)}))
    return 0
