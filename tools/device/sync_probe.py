"""Why a synchronizing solve's kernel measures slower than ncu says: one process, the same kernel timed
under several per-sample protocols, CUPTI kernel durations compared.

    python3 tools/device/sync_probe.py --case tests/data/cases/sync_solve --cache /tmp/probe-cache --out probe.json

Protocols (each sample: what is queued before the one call; then a synchronize after it):
  idle        flush, marker, synchronize, call                 (timing.sync today: the GPU is idle when it starts)
  lead20      flush, synchronize, a 20 us delay kernel, call   (the call's kernel starts on a busy GPU)
  lead200     flush, a 200 us delay kernel, call               (no synchronize before the call)
  noflush     marker, synchronize, call                        (no L2 flush)
  settle      flush, synchronize, 200 us of host wait, call    (a long idle gap)
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

SAMPLES = 150


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--case", type=Path, required=True)
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--branches", default="baseline,device_sync")
    args = parser.parse_args()
    import torch

    from pytest_dcuopt.case.buffers import resolve_shapes
    from pytest_dcuopt.case.cabi import parse_solve_signature
    from pytest_dcuopt.case.ref_loader import load_reference
    from pytest_dcuopt.toolchains.binding import BindSpec
    from pytest_dcuopt.toolchains.cache import BuildCache
    from pytest_dcuopt.toolchains.cuda import CudaToolchain
    from pytest_dcuopt.toolchains.torch_device_timer import TorchDeviceTimer

    dims = json.loads((args.case / "dims.json").read_text())
    reference = load_reference(args.case / "ref.py", dims)
    toolchain = CudaToolchain()
    runtime = toolchain.runtime()
    device_timer = TorchDeviceTimer(torch, torch.device("cuda", 0), "read")
    ghz = torch.cuda.get_device_properties(0).clock_rate / 1e6 if hasattr(
        torch.cuda.get_device_properties(0), "clock_rate") else 1.98
    cycles_per_us = ghz * 1e3

    def protocol(name: str, launch) -> None:  # noqa: ANN001
        if name == "idle":
            device_timer.flush(); device_timer.sleep(1000); device_timer.synchronize()
        elif name == "lead20":
            device_timer.flush(); device_timer.synchronize(); device_timer.sleep(int(20 * cycles_per_us))
        elif name == "lead200":
            device_timer.flush(); device_timer.sleep(int(200 * cycles_per_us))
        elif name == "noflush":
            device_timer.sleep(1000); device_timer.synchronize()
        elif name == "settle":
            device_timer.flush(); device_timer.synchronize()
            end = time.perf_counter() + 200e-6
            while time.perf_counter() < end:
                pass
        launch()
        device_timer.synchronize()

    results: dict[str, dict[str, float]] = {}
    source_for = {"baseline": args.case / "kernel.cu"}
    source_for.update({p.parent.name: p for p in sorted(args.case.glob("branches/*/kernel.cu"))})
    for branch in args.branches.split(","):
        source = source_for[branch]
        params = parse_solve_signature(source.read_text(), str(source))
        kernel = toolchain.load(toolchain.build(source, BuildCache(args.cache)), params)
        spec = BindSpec(dict(dims), 0, resolve_shapes(params, reference.shapes, dims, str(source)), reference.inputs)
        binding = kernel.bind(spec, runtime)
        for _ in range(10):
            binding.launch()
        device_timer.synchronize()
        results[branch] = {}
        for rnd in range(2):
            for name in ("idle", "lead20", "lead200", "noflush", "settle"):
                acts = device_timer.profile_activities(lambda: [protocol(name, binding.launch) for _ in range(SAMPLES)])
                kernels = [a.seconds * 1e6 for a in acts or [] if "affine" in a.name]
                key = f"{name}#{rnd}"
                results[branch][key] = round(statistics.median(kernels), 3) if kernels else -1.0
                print(branch, key, results[branch][key], len(kernels), flush=True)
        del binding
        torch.cuda.empty_cache()
    args.out.write_text(json.dumps({"samples": SAMPLES, "ghz": ghz, "median_kernel_us": results}, indent=1))


if __name__ == "__main__":
    main()
