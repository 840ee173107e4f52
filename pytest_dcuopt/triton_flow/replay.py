"""`dcuopt triton run`: re-run one captured kernel on its captured inputs, timed by the harness's device timing.

The kernel is launched through Inductor's own launcher (the CachingAutotuner in the captured `kernel.py`), pinned to
one config, so the grid is computed exactly as in the model. By default that config is the one Inductor runs
(`capture.inductor_choice`: coordinate descent's winner when coordinate descent ran, else the autotuning best);
`--config N` picks capture.json's configs[N]. Nothing re-tunes during the replay: coordinate descent and rblock
scaling are switched off in the autotuner's inductor_meta copy, its save_cache_hook is dropped, and `kernel.py` is
loaded from a copy in a temporary folder so no `.best_config` of an earlier run is read and none is written beside
the capture. The config recorded as timed is read back from the launcher Inductor ran, after the timing. Timing is
`timing.device.measure_device` over `TorchDeviceTimer` (cold samples with the L2 flushed, the launch hidden behind a
delay kernel, the event cost removed): the same numbers a harness case gets, not a parse of printed lines. A kernel
that writes into an input (in_out_ptr) runs on its own result after the first call: the time is right, the values
are not checked (a replay has no reference; see to-case).
"""
from __future__ import annotations

import importlib.util
import json
import shutil
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..timing.device import measure_device
from ..timing.policy import TimingPolicy
from .capture import AUTOTUNE_TIMING, inductor_choice, log_entries, same_config
from .flow_files import FlowError, read_json, write_json

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


def choose(record: dict[str, Any], folder: Path, config_index: int | None) -> tuple[dict[str, Any], str]:
    """The config to time and why: configs[config_index] when asked, else the config Inductor runs."""
    if config_index is not None:
        return record["configs"][config_index], f"--config {config_index} (capture.json's configs[{config_index}])"
    choice = inductor_choice(record, log_entries(folder.parent))
    if choice["entry"] is None:
        raise FlowError(f"run: {folder}/capture.json has no timed config; capture again")
    source = f"the config Inductor runs: {choice['source']}"
    return choice["entry"], source + (f"; {choice['note']}" if choice["note"] else "")


def pin(autotuner: Any, config: Any) -> None:
    """Keep the autotuner to `config` and switch off everything that would tune again or touch a cache: Inductor's
    CachingAutotuner.run runs coordinate descent on a launcher not `found_by_coordesc` when inductor_meta says
    `coordinate_descent_tuning` (the H200 replay re-tuned to XBLOCK 4 that way), adds rblock-halved configs
    (`dynamic_scale_rblock`), and saves winners through `save_cache_hook`."""
    autotuner.inductor_meta = {**autotuner.inductor_meta, "coordinate_descent_tuning": False,
                               "dynamic_scale_rblock": False, "autotune_local_cache": False,
                               "autotune_remote_cache": False}
    autotuner.__dict__.pop("_could_rblock_scale", None)  # a cached_property computed from the old meta
    autotuner.save_cache_hook = None
    autotuner.configs = [config]
    autotuner.compile_results = []
    autotuner.launchers = []


def launched(autotuner: Any) -> dict[str, Any] | None:
    """The config of the launcher Inductor's autotuner ran (None when it holds not exactly one)."""
    launchers = list(getattr(autotuner, "launchers", []) or [])
    if len(launchers) != 1:
        return None
    one = launchers[0]
    config = one.config
    return {"config": str(config), "kwargs": dict(config.kwargs), "num_warps": config.num_warps,
            "num_stages": config.num_stages, "n_regs": getattr(one, "n_regs", None),
            "n_spills": getattr(one, "n_spills", None), "shared": getattr(one, "shared", None)}


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

    from ..toolchains.torch_device_timer import TorchDeviceTimer

    if not torch.cuda.is_available():
        raise FlowError("run: torch sees no GPU here; a captured kernel runs only on a GPU like the one it was "
                        "captured on (run this on that machine)")
    entry, source = choose(record, folder, config_index)
    device = torch.device("cuda", torch.cuda.current_device())
    args = arguments(record, torch.load(folder / "inputs.pt"), torch, device)
    with tempfile.TemporaryDirectory(prefix="dcuopt-replay-") as scratch:
        # a copy: Inductor's local autotune cache is `<hash>.best_config` beside the module's file
        shutil.copy2(folder / "kernel.py", Path(scratch) / "kernel.py")
        module = load_module(Path(scratch) / "kernel.py", f"dcuopt_captured_{record['folder']}")
        autotuner = getattr(module, record["kernel"])
        pin(autotuner, pinned_config(autotuner, entry))
        launch, launcher_used = launcher(autotuner, record, entry, args, torch, device)
        before = launched(autotuner)
        samples = measure_device([launch], TimingPolicy(max_time_s=max_time_s, side_figures=False),
                                 TorchDeviceTimer(torch, device))
        after = launched(autotuner)
    if launch.__name__ == "direct":  # the @triton.jit function called with the entry's options: that is the config
        timed: dict[str, Any] | None = {k: entry[k] for k in ("config", "kwargs", "num_warps", "num_stages")}
        read_back = "the options passed to the @triton.jit launch"
    else:
        timed = after if after is not None and before is not None and same_config(before, after) else None
        read_back = ("read back from Inductor's launcher after the timing" if timed is not None else
                     f"Inductor's launcher changed or held several configs (before {before}, after {after})")
    median_ms = statistics.median(samples.seconds) * 1e3
    result = {"kernel": record["kernel"], "folder": str(folder),
              "config": timed["config"] if timed else f"unknown (asked for {entry['config']})",
              "timed": timed, "timed_read_back": read_back, "requested": entry["config"], "config_source": source,
              "timed_is_requested": timed is not None and same_config(timed, entry),
              "retuning": "off (coordinate descent, rblock scaling and autotune caches switched off; kernel.py "
                          "loaded from a temporary copy)",
              "autotune_ms": entry.get("ms"), "autotune_timing": AUTOTUNE_TIMING,
              "median_ms": median_ms, "samples": len(samples.seconds),
              "timer": samples.timer, "mode": samples.mode, "stop_reason": samples.stop_reason,
              "quality": samples.extra.get("quality"), "device": torch.cuda.get_device_name(device),
              "footprint_gbps": record["footprint_bytes"] / (median_ms * 1e-3) / 1e9 if median_ms > 0 else None,
              "launcher": launcher_used, "correctness": record.get("correctness")}
    write_json(folder / RESULT, result)
    return result


def describe(result: dict[str, Any]) -> list[str]:
    if "timed" not in result:  # a run.json written before the timed config was read back from the launcher
        return [f"{result['kernel']} on {result['device']}: median {result['median_ms']:.4f} ms over "
                f"{result['samples']} {result['mode']} samples ({result['timer']}; quality {result['quality']}); "
                f"autotuning measured {result['autotune_ms']:.4f} ms for {result['config']}",
                f"footprint rate {result['footprint_gbps']:.1f} GB/s (tensor bytes over time; not HBM traffic)",
                f"values not checked: {result['correctness']}"]
    lines = [f"{result['kernel']} on {result['device']}: median {result['median_ms']:.4f} ms over "
             f"{result['samples']} {result['mode']} samples ({result['timer']}; quality {result['quality']})",
             f"timed config {result['config']} ({result['timed_read_back']}); asked for {result['requested']}: "
             f"{result['config_source']}; re-tuning {result['retuning']}"]
    if not result["timed_is_requested"]:
        lines.append("WARNING: the timed config is not the one asked for")
    if result.get("autotune_ms") is not None:
        lines.append(f"Inductor's autotuning figure for it: {result['autotune_ms']:.4f} ms "
                     f"({result['autotune_timing']})")
    return [*lines, f"footprint rate {result['footprint_gbps']:.1f} GB/s (tensor bytes over the device time; not HBM "
                    "traffic)", f"values not checked: {result['correctness']}"]


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
