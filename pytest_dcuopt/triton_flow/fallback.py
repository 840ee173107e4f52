"""The eager-fallback decision, measured: the model end to end compiled, then with the hot region under
`torch._dynamo.disable`, both timed by the harness's device timing; and the compiled model's kernels ranked by
device time (torch.profiler), which gives the hot kernel's rank and time share.

The model comes from a Python file with `build()` returning `{"model": module, "inputs": (tensors...),
"region": "dotted.submodule.name"}` (the region is `model.get_submodule(region)`; its forward is wrapped in
torch._dynamo.disable for the second timing, so everything around it stays compiled). Both runs use
`torch.no_grad()`, the same inputs and a fresh torch._dynamo state.
"""
from __future__ import annotations

import importlib
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

from ..timing.device import measure_device
from ..timing.policy import TimingPolicy
from .flow_files import FlowError
from .replay import load_module


def build_model(path: Path) -> dict[str, Any]:
    module = load_module(path, "dcuopt_fallback_model")
    if not callable(getattr(module, "build", None)):
        raise FlowError(f"{path} has no build(); define `def build(): return {{'model': m, 'inputs': (x,), "
                        "'region': 'submodule.name'}` (the region to run eagerly)")
    spec = dict(module.build())
    missing = [k for k in ("model", "inputs", "region") if k not in spec]
    if missing:
        raise FlowError(f"{path}: build() returned no {', '.join(missing)}; it must return model, inputs and region")
    return spec


def model_path(path: Path) -> str:
    """The model file as fallback.json names it: relative to the current folder when it is under it (no machine's
    folder in the record), else as given."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (OSError, ValueError):
        return str(path)


def kernel_shares(activities: list[Any]) -> list[dict[str, Any]]:
    """Device time per kernel name, largest first, with rank and share of the total."""
    totals: dict[str, float] = defaultdict(float)
    for activity in activities:
        totals[activity.name] += activity.seconds
    whole = sum(totals.values()) or 1.0
    ranked = sorted(totals.items(), key=lambda item: item[1], reverse=True)
    return [{"rank": i + 1, "kernel": name, "ms": seconds * 1e3, "share": seconds / whole}
            for i, (name, seconds) in enumerate(ranked)]


def measure(path: Path, max_time_s: float = 2.0) -> dict[str, Any]:
    from ..toolchains.torch_device_timer import TorchDeviceTimer

    torch: Any = importlib.import_module("torch")  # untyped use: torch ships partial stubs for _dynamo

    if not torch.cuda.is_available():
        raise FlowError("the eager-fallback timing needs a GPU (torch sees none here); run it on the GPU machine")
    spec = build_model(path)
    model, inputs, region = spec["model"], tuple(spec["inputs"]), str(spec["region"])
    device = torch.device("cuda", torch.cuda.current_device())
    device_timer = TorchDeviceTimer(torch, device)
    policy = TimingPolicy(max_time_s=max_time_s, side_figures=False)
    result: dict[str, Any] = {"model": model_path(path), "region": region,
                              "device": torch.cuda.get_device_name(device)}
    with torch.no_grad():
        torch._dynamo.reset()
        compiled = torch.compile(model, **spec.get("compile", {}))
        compiled(*inputs)
        torch.cuda.synchronize(device)
        result["compiled_ms"] = _median_ms(measure_device([lambda: compiled(*inputs)], policy, device_timer))
        activities = device_timer.profile_activities(lambda: compiled(*inputs))
        result["kernels"] = kernel_shares(activities) if activities is not None else []
        if activities is None:
            result["profile_problem"] = getattr(device_timer, "profiler_problem", "torch.profiler recorded nothing")
        target = model.get_submodule(region)
        original = target.forward
        target.forward = torch._dynamo.disable(original)
        try:
            torch._dynamo.reset()
            partial = torch.compile(model, **spec.get("compile", {}))
            partial(*inputs)
            torch.cuda.synchronize(device)
            result["fallback_ms"] = _median_ms(measure_device([lambda: partial(*inputs)], policy, device_timer))
        finally:
            target.forward = original
    result["difference_ms"] = result["fallback_ms"] - result["compiled_ms"]
    result["fallback_over_compiled"] = result["fallback_ms"] / result["compiled_ms"]
    return result


def _median_ms(samples: Any) -> float:
    return float(statistics.median(samples.seconds) * 1e3)
