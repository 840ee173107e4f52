"""What does a start/end event pair add to a kernel's time, and what can measure that without ncu?

Evidence for docs/gpu-timing.md ("the event bracket's cost"). Two subcommands, run on a CUDA GPU:

  measure     per target: the raw cold event median (no correction), the profiler's (CUPTI) device time,
              and the same cold procedure around *nothing* (an empty event pair) and around a 1-element
              fill kernel; writes JSON
  ncu-target  the program ncu runs: each target's calls between cudaProfilerStart/Stop, a marker between
  spread      one process's harness numbers for the 5-20 us targets, and alternating kernel/tiny-kernel windows
  calibrate   the per-device bracket calibration repeated (fresh device_timers; run it several times for fresh
              processes), with every raw bracket sample kept

Targets: vector_add (scalar and float4) over a size sweep, and two suite branches at their GPU dims.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]  # tools/device/ -> the repository root
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # h200_evidence.py beside this file

from h200_evidence import NCU_CALLS, Loaded, Target, policy

KERNELS = ROOT / "kernels"
SIZES = (65536, 262144, 1048576, 4194304, 16777216)


def kernel_targets() -> list[Target]:
    found = []
    for branch, source in (("baseline", KERNELS / "vector_add/kernel.cu"),
                           ("float4", KERNELS / "vector_add/branches/float4/kernel.cu")):
        found += [Target(f"vector_add/{branch}@N={n}", "vector_add", branch, source, {"N": n}, False) for n in SIZES]
    for case, branch in (("row_sum", "block_per_row_float4"), ("matmul", "regtile_4x4")):
        dims = json.loads((KERNELS / case / "dims.cuda.json").read_text())
        found.append(Target(f"{case}/{branch}", case, branch, KERNELS / case / "branches" / branch / "kernel.cu", dims, False))
    return found


def fill_kernel() -> Callable[[], Any]:
    import torch

    tiny = torch.empty(1, device="cuda")
    return tiny.zero_


def cmd_measure(args: argparse.Namespace) -> None:
    from dataclasses import replace

    import torch

    from pytest_dcuopt.timing.bracket import Hiding
    from pytest_dcuopt.timing.device import measure_device
    from pytest_dcuopt.timing.offset import calibrate_offset

    result: dict[str, Any] = {}
    runtime = None
    raw_policy = replace(policy(0.5), event_offset="none")  # raw event times; the profiler is run explicitly below

    def record(label: str, launch: Callable[[], Any], device_timer: Any, nbytes: int = 0) -> None:
        samples = measure_device([launch], raw_policy, device_timer, nbytes)
        raw = statistics.median(samples.seconds)
        hiding = Hiding(True, samples.extra["launch_hiding"]["cycles_per_us"] * 1e6,
                        samples.extra["launch_hiding"]["delay_us"] * 1e-6)
        offset = calibrate_offset(launch, device_timer, hiding, raw, samples=40)
        result[label] = {"raw_event_median_us": raw * 1e6, "raw_min_us": min(samples.seconds) * 1e6,
                         "n": len(samples.seconds), "hot_us": samples.extra["hot"]["median_ms"] * 1e3,
                         "profiler": offset.to_json()}
        print(label, json.dumps({k: v for k, v in result[label].items() if k != "profiler"}),
              offset.to_json().get("offset_us"), offset.to_json().get("device_median_us"), flush=True)

    for target in kernel_targets():
        loaded = Loaded(target, args.cache, runtime)
        runtime = loaded.runtime
        device_timer = runtime.device_timer()
        record(target.label, loaded.binding.launch, device_timer, loaded.binding.nbytes)
        del loaded
        torch.cuda.empty_cache()
    device_timer = runtime.device_timer()
    record("empty event pair", lambda: None, device_timer)
    record("1-element fill kernel", fill_kernel(), device_timer)
    args.out.write_text(json.dumps(result, indent=1))


def cmd_calibrate(args: argparse.Namespace) -> None:
    """How much the per-device calibration varies: repeated in this process (fresh device_timers) and in fresh
    processes (--fresh), keeping every raw bracket sample so other estimators can be compared."""
    import time

    import torch

    from pytest_dcuopt.timing.bracket import calibrate_hiding, host_launch_seconds
    from pytest_dcuopt.timing.offset import CALIBRATION_BATCH, bracketed_samples, calibrate_bracket
    from pytest_dcuopt.toolchains.torch_device_timer import TorchDeviceTimer

    reps = []
    for _ in range(args.reps):
        device_timer = TorchDeviceTimer(torch, torch.device("cuda"))
        launch = device_timer.tiny_kernel
        host = host_launch_seconds(launch, device_timer, time.perf_counter)
        hiding = calibrate_hiding(device_timer, host)
        raw = {count: bracketed_samples(device_timer, launch, count, hiding, host, time.perf_counter, args.samples)
               for count in (0, 1, 2, CALIBRATION_BATCH)}
        offset = calibrate_bracket(device_timer, hiding, time.perf_counter)
        reps.append({"offset": offset.to_json(), "raw_us": {c: [t * 1e6 for t in v] for c, v in raw.items()}})
        print(json.dumps({k: v for k, v in offset.to_json().items() if k != "what"}), flush=True)
        del device_timer
    args.out.write_text(json.dumps(reps))


SPREAD_SIZES = (1048576, 4194304)  # the 5-20 us band on an H200


def spread_targets() -> list[Target]:
    return [t for t in kernel_targets() if t.dims.get("N") in SPREAD_SIZES and t.case == "vector_add"]


def cmd_spread(args: argparse.Namespace) -> None:
    """One fresh process: the shipped harness numbers for the 5-20 us targets, then windows that alternate kernel
    and tiny-kernel brackets (does a bracket cost measured in the same window track the kernel's better?)."""
    import time

    import torch

    from pytest_dcuopt.timing.bracket import Marks, calibrate_hiding, host_launch_seconds, queue_bracket, settle

    result: dict[str, Any] = {"harness": {}, "windows": {}}
    runtime = None
    for target in spread_targets():
        loaded = Loaded(target, args.cache, runtime)
        runtime = loaded.runtime
        samples = loaded.measure(policy(0.3))
        offset = samples.extra["event_offset"]
        result["harness"][target.label] = {"median_us": statistics.median(samples.seconds) * 1e6,
                                           "raw_us": offset["raw_event_median_ms"] * 1e3,
                                           "offset_us": offset.get("offset_us"), "reused": offset.get("reused", False)}
        device_timer = runtime.device_timer()
        host = host_launch_seconds(loaded.binding.launch, device_timer, time.perf_counter)
        hiding = calibrate_hiding(device_timer, host)
        hiding.delay_s = max(hiding.delay_s, 200e-6)  # every bracket on time: no late samples to drop
        windows = []
        for _ in range(6):
            marks: Marks = []
            spans: list[float] = []
            for _ in range(60):
                for body in (loaded.binding.launch, device_timer.tiny_kernel):
                    device_timer.flush()
                    queue_bracket(device_timer, body, hiding, time.perf_counter, marks, spans)
            device_timer.synchronize()
            times, late = settle(marks, spans, hiding, 1)
            kernel = [t for i, (t, bad) in enumerate(zip(times, late)) if i % 2 == 0 and not bad]
            tiny = [t for i, (t, bad) in enumerate(zip(times, late)) if i % 2 == 1 and not bad]
            if kernel and tiny:
                windows.append({"kernel_raw_us": statistics.median(kernel) * 1e6,
                                 "tiny_raw_us": statistics.median(tiny) * 1e6})
        result["windows"][target.label] = windows
        print(target.label, json.dumps(result["harness"][target.label]),
              [(round(w["kernel_raw_us"], 2), round(w["tiny_raw_us"], 2)) for w in windows], flush=True)
        del loaded
        torch.cuda.empty_cache()
    args.out.write_text(json.dumps(result, indent=1))


def cmd_ncu_target(args: argparse.Namespace) -> None:
    import torch

    order = []
    runtime = None
    launches: list[tuple[str, Callable[[], Any]]] = []
    for target in (spread_targets() if args.spread else kernel_targets()):
        loaded = Loaded(target, args.cache, runtime)
        runtime = loaded.runtime
        _profile(target.label, loaded.binding.launch)
        order.append(target.label)
        del loaded
        torch.cuda.empty_cache()
    launches.append(("1-element fill kernel", fill_kernel()))
    for label, launch in launches:
        _profile(label, launch)
        order.append(label)
    args.out.write_text(json.dumps({"order": order, "calls": NCU_CALLS}, indent=1))


def _profile(label: str, launch: Callable[[], Any]) -> None:
    import torch

    for _ in range(5):
        launch()
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    torch.cuda._sleep(1000)  # marker kernel between targets
    for _ in range(NCU_CALLS):
        launch()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=("measure", "ncu-target", "calibrate", "spread"))
    parser.add_argument("--spread", action="store_true", help="ncu-target: only the spread targets")
    parser.add_argument("--cache", type=Path)
    parser.add_argument("--reps", type=int, default=4)
    parser.add_argument("--samples", type=int, default=400)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    {"measure": cmd_measure, "ncu-target": cmd_ncu_target, "calibrate": cmd_calibrate,
     "spread": cmd_spread}[args.command](args)


if __name__ == "__main__":
    main()
