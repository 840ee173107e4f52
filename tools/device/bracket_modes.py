"""How the way cold samples are queued moves the event bracket: chunked (the async method: 20 samples queued
back to back, one synchronize) against isolated (a synchronize before each sample, as the sync method and ncu
start from an idle GPU), at several delay-kernel lengths, around nothing, 1, 2 and 34 one-element fills and the
sync_solve kernels (tests/data/cases/sync_solve: baseline and three_kernels_async) at N = 1M and 3M.

  python3 tools/device/bracket_modes.py --cache DIR --out modes.json

Per (mode, delay, target): the raw event samples' median, p10, p90 and n (late samples dropped as in sampling),
and per (mode, delay) the calibration it implies (per_kernel = (T(34) - T(2)) / 32, offset = T(1) - per_kernel)
and each kernel's raw median less that offset.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
CASE = ROOT / "tests/data/cases/sync_solve"
SAMPLES = 200


def kernels(cache: Path) -> dict[str, Callable[[], Any]]:
    from pytest_dcuopt.case.buffers import resolve_shapes
    from pytest_dcuopt.case.cabi import parse_solve_signature
    from pytest_dcuopt.case.ref_loader import load_reference
    from pytest_dcuopt.toolchains.binding import BindSpec
    from pytest_dcuopt.toolchains.cache import BuildCache
    from pytest_dcuopt.toolchains.cuda import CudaToolchain

    toolchain = CudaToolchain()
    runtime = toolchain.runtime()
    found: dict[str, Callable[[], Any]] = {}
    keep: list[Any] = []
    for branch, source in (("baseline", CASE / "kernel.cu"),
                           ("three_kernels_async", CASE / "branches/three_kernels_async/kernel.cu")):
        params = parse_solve_signature(source.read_text(), str(source))
        kernel = toolchain.load(toolchain.build(source, BuildCache(cache)), params)
        for n in (1 << 20, 3 << 20):
            dims = {"N": n}
            reference = load_reference(CASE / "ref.py", dims)
            spec = BindSpec(dims, 0, resolve_shapes(params, reference.shapes, dims, str(source)), reference.inputs)
            binding = kernel.bind(spec, runtime)
            keep.append(binding)
            found[f"{branch}@{n >> 20}M"] = binding.launch
    found["_keep"] = lambda: keep  # the bindings stay alive
    return found


def quantiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    n = len(ordered)
    return {"median": round(statistics.median(ordered) * 1e6, 3), "p10": round(ordered[n // 10] * 1e6, 3),
            "p90": round(ordered[(9 * n) // 10] * 1e6, 3), "n": n}


def samples(device_timer: Any, body: Callable[[], Any], delay_s: float, rate: float, isolated: bool) -> list[float]:
    from pytest_dcuopt.timing.bracket import Hiding, queue_bracket, settle

    hiding = Hiding(True, cycles_per_s=rate, delay_s=delay_s)
    kept: list[float] = []
    for _ in range(60):
        marks: list[Any] = []
        spans: list[float] = []
        for _ in range(20):
            if isolated:
                device_timer.synchronize()
            device_timer.flush()
            queue_bracket(device_timer, body, hiding, time.perf_counter, marks, spans)
        device_timer.synchronize()
        times, late = settle(marks, spans, hiding, 1)
        kept += [t for t, is_late in zip(times, late, strict=True) if not is_late]
        if len(kept) >= SAMPLES:
            break
    return kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    import torch

    from pytest_dcuopt.timing.bracket import calibrate_hiding, delay_for, host_launch_seconds
    from pytest_dcuopt.toolchains.torch_device_timer import TorchDeviceTimer

    device_timer = TorchDeviceTimer(torch, torch.device("cuda"))
    found = kernels(args.cache)
    tiny = device_timer.tiny_kernel
    host = host_launch_seconds(found["baseline@1M"], device_timer, time.perf_counter)
    rate = calibrate_hiding(device_timer, host).cycles_per_s
    auto = delay_for(host)
    for launch in found.values():  # warm
        launch()
    device_timer.synchronize()

    def repeat(count: int) -> Callable[[], None]:
        def body() -> None:
            for _ in range(count):
                tiny()
        return body

    targets = {"empty": repeat(0), "tiny1": repeat(1), "tiny2": repeat(2), "tiny34": repeat(34),
               **{k: v for k, v in found.items() if not k.startswith("_")}}
    result: dict[str, Any] = {"auto_delay_us": round(auto * 1e6, 2), "host_launch_us": quantiles(host)}
    for isolated in (False, True):
        for delay in (auto, 100e-6, 300e-6):
            key = f"{'isolated' if isolated else 'chunked'}@{delay * 1e6:.0f}us"
            rows = {name: samples(device_timer, body, max(delay, auto), rate, isolated) for name, body in targets.items()}
            summary = {name: quantiles(values) for name, values in rows.items()}
            t = {name: statistics.median(values) for name, values in rows.items()}
            per_kernel = (t["tiny34"] - t["tiny2"]) / 32
            offset = t["tiny1"] - per_kernel
            summary["_calibration"] = {"per_kernel_us": round(per_kernel * 1e6, 3), "offset_us": round(offset * 1e6, 3),
                                       **{f"{name}_corrected_us": round((t[name] - offset) * 1e6, 3)
                                          for name in found if not name.startswith("_")}}
            result[key] = summary
            print(key, json.dumps(summary["_calibration"]), flush=True)
            shown = {name: (q["median"], q["p10"], q["p90"]) for name, q in summary.items() if name != "_calibration"}
            print("   ", shown, flush=True)
    args.out.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
