"""Where a checked call's harness time goes on a GPU, step by step, on the real binding and torch runtime.

    python3 tools/device/checked_call_probe.py --out probe.json [--elements 33554432] [--repeats 3]

Binds `solve(const float* x, const float* y, float* z, int N)` (vector_add's signature; three buffers of `elements`
float32) to a kernel that does nothing (the harness's own work is measured, not a kernel's), with host memory
page-locked and pageable (DCUOPT_PINNED_HOST), and times each step the worker takes around a checked call:
`reset_inputs`, `scramble_outputs`, the snapshot (download, guard and const checks, output copies) and the
new-inputs call's redraw. Also the bare primitives at one buffer's size: host-to-device and device-to-host copies
from pageable and page-locked memory, SHA-256 and XXH3-128 digests, a copy into fresh memory. Medians of `repeats`.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np


def timed(step: Callable[[], Any], repeats: int, sync: Callable[[], None]) -> float:
    times = []
    for _ in range(repeats):
        sync()
        began = time.perf_counter()
        step()
        sync()
        times.append(time.perf_counter() - began)
    return round(statistics.median(times), 4)


def binding_steps(pinned: bool, elements: int, repeats: int) -> dict[str, Any]:
    os.environ["DCUOPT_PINNED_HOST"] = "1" if pinned else "0"
    import torch

    from pytest_dcuopt.case.cabi import parse_solve_signature
    from pytest_dcuopt.toolchains.binding import BindSpec
    from pytest_dcuopt.toolchains.cabi_binding import CAbiBinding
    from pytest_dcuopt.toolchains.torch_runtime import TorchDeviceRuntime

    runtime = TorchDeviceRuntime(0)
    params = parse_solve_signature('extern "C" void solve(const float* x, const float* y, float* z, int N) {}')
    shapes = {name: (elements,) for name in ("x", "y", "z")}
    began = time.perf_counter()
    binding = CAbiBinding(params, BindSpec({"N": elements}, 0, shapes), runtime, lambda *args: None)
    torch.cuda.synchronize()
    bind_s = time.perf_counter() - began
    binding.snapshot()  # staging allocated
    sync = torch.cuda.synchronize

    def after_launch(step: Callable[[], Any]) -> Callable[[], Any]:
        def run() -> Any:
            binding.launch()  # the harness then treats every buffer as possibly written
            return step()
        return run

    steps = {
        "bind_s": round(bind_s, 4),
        "reset_all_s": timed(after_launch(binding.reset), repeats, sync),
        "reset_inputs_s": timed(after_launch(binding.reset_inputs), repeats, sync),
        "scramble_outputs_s": timed(lambda: binding.scramble_outputs(1), repeats, sync),
        "snapshot_s": timed(after_launch(binding.snapshot), repeats, sync),
        "redraw_first_s": timed(lambda: (binding.redraw_inputs(5), binding.restore_inputs()), 1, sync),
        "redraw_again_s": timed(lambda: (binding.redraw_inputs(5), binding.restore_inputs()), repeats, sync),
    }
    return {"host_memory": runtime.host_memory, **steps}


def primitives(elements: int, repeats: int) -> dict[str, Any]:
    import torch
    import xxhash

    nbytes = elements * 4
    sync = torch.cuda.synchronize
    pageable = np.random.default_rng(0).random(elements, dtype=np.float32)
    pinned = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True).numpy().view(np.float32)
    pinned[:] = pageable
    device = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    found: dict[str, Any] = {"bytes": nbytes}
    for name, host in (("pageable", pageable), ("pinned", pinned)):
        raw = torch.from_numpy(host.view(np.uint8))
        found[f"h2d_{name}_s"] = timed(lambda raw=raw: device.copy_(raw), repeats, sync)
        found[f"d2h_{name}_s"] = timed(lambda raw=raw: raw.copy_(device), repeats, sync)
    found["sha256_s"] = timed(lambda: hashlib.sha256(pageable.data).digest(), repeats, sync)
    found["xxh3_128_s"] = timed(lambda: xxhash.xxh3_128(pageable.data).digest(), repeats, sync)
    found["copy_fresh_s"] = timed(lambda: pageable.copy(), repeats, sync)
    target = np.empty_like(pageable)
    found["copy_into_s"] = timed(lambda: np.copyto(target, pageable), repeats, sync)
    for key in [k for k in found if k.endswith("_s")]:
        found[key.replace("_s", "_gb_s")] = round(nbytes / found[key] / 1e9, 2) if found[key] else None
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--elements", type=int, default=1 << 25)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    report = {"elements": args.elements, "primitives": primitives(args.elements, args.repeats),
              "pinned": binding_steps(True, args.elements, args.repeats),
              "pageable": binding_steps(False, args.elements, args.repeats)}
    with open(args.out, "w") as handle:
        json.dump(report, handle, indent=1)
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
