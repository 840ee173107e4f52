"""Evidence driver for the GPU timing method (docs/gpu-timing.md). Run by tools/device/h200_evidence.sh.

Subcommands (each reads the suite's state.json for the branches and their GPU dims, and builds
through the harness's own `cuda` toolchain and build cache, so the code measured is the code the
suite measured):

  targets     list what is measured: every correct cuda branch at its suite dims, plus a size sweep
  ncu-target  the program ncu runs: each target's calls inside cudaProfilerStart/Stop, a marker between
  fidelity    harness cold median vs ncu gpu__time_duration per target (+ the original method, hot)
  extras      flush modes, the size sweep (harness vs original method), launch overhead, and the
              near-the-limit check (vector-add champion far beyond L2 vs a device-to-device copy)
  stability   max/min of each branch's median over several suite runs
  env         the machine: GPU, driver, clocks, tool versions
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]  # tools/device/ -> the repository root
sys.path.insert(0, str(ROOT))

KERNELS = ROOT / "kernels"
ARCH = "sm_90"
NCU_CALLS = 7
SWEEP_SIZES = (65536, 262144, 1048576, 4194304, 16777216)  # ~2.5 us to ~60 us kernels on an H200
SWEEP = [(case, branch, n) for case, branch in (("vector_add", "baseline"), ("vector_add", "float4")) for n in SWEEP_SIZES]
NEAR_LIMIT_N = 1 << 28  # 268,435,456 floats: 1 GiB per array, 3 GiB moved per call (about 50x the L2)


@dataclass
class Target:
    label: str
    case: str
    branch: str
    source: Path
    dims: dict[str, Any]
    suite: bool  # a suite branch at its suite dims (fidelity table) or a sweep point


# ----- building blocks ------------------------------------------------------------------------
def suite_branches(state_path: Path) -> list[tuple[str, str, dict[str, Any]]]:
    state = json.loads(state_path.read_text())
    found = []
    for case, data in sorted(state["cases"].items()):
        for branch, record in sorted(data["toolchains"].get("cuda", {}).get("branches", {}).items()):
            if record.get("correct") is not False and record.get("timing"):  # benchmark-only runs leave None
                found.append((case, branch, record))
    return found


def targets(state_path: Path) -> list[Target]:
    found = [Target(f"{case}/{branch}", case, branch, ROOT / record["source"], record["timing"]["dims"], True)
             for case, branch, record in suite_branches(state_path)]
    sources = {(t.case, t.branch): t.source for t in found}
    for case, branch, n in SWEEP:
        if (case, branch) in sources:
            found.append(Target(f"{case}/{branch}@N={n}", case, branch, sources[(case, branch)], {"N": n}, False))
    return found


class Loaded:
    """One target built, loaded and bound exactly as the suite's worker does it."""

    def __init__(self, target: Target, cache_dir: Path, runtime: Any = None) -> None:
        from pytest_dcuopt.case.buffers import resolve_shapes
        from pytest_dcuopt.case.cabi import parse_solve_signature
        from pytest_dcuopt.case.ref_loader import load_reference
        from pytest_dcuopt.toolchains.binding import BindSpec
        from pytest_dcuopt.toolchains.cache import BuildCache
        from pytest_dcuopt.toolchains.cuda import CudaToolchain

        self.target = target
        toolchain = CudaToolchain(arch=ARCH)
        if runtime is not None:
            toolchain._runtime = runtime
        self.runtime = toolchain.runtime()
        reference = load_reference(KERNELS / target.case / "ref.py", target.dims)
        params = parse_solve_signature(target.source.read_text(), str(target.source))
        self.artifact = toolchain.build(target.source, BuildCache(cache_dir))
        shapes = resolve_shapes(params, reference.shapes, target.dims, str(target.source))
        self.spec = BindSpec(dict(target.dims), 0, shapes, reference.inputs)
        self.kernel = toolchain.load(self.artifact, params)
        self.binding = self.kernel.bind(self.spec, self.runtime)
        self.reference = reference

    def measure(self, policy: Any) -> Any:
        from dataclasses import replace

        count = self.runtime.rotation_sets(self.binding.nbytes)
        others = [self.kernel.bind(replace(self.spec, seed=i), self.runtime) for i in range(1, count)]
        return self.runtime.measure_sets([self.binding.launch, *(o.launch for o in others)], policy, self.binding.nbytes)

    def bytes_moved(self) -> float | None:
        return self.reference.bytes_moved(**self.target.dims) if self.reference.bytes_moved else None


def policy(max_time_s: float = 1.0) -> Any:
    from pytest_dcuopt.timing.policy import TimingPolicy

    return TimingPolicy(warmup_s=0.1, min_samples=20, max_time_s=max_time_s, target_rel_spread=0.005)


def summary_ms(seconds: list[float]) -> dict[str, float]:
    from pytest_dcuopt.timing.policy import summarize

    s = summarize(seconds)
    return {"median_ms": s.median_ms, "iqr_ms": s.iqr_ms, "min_ms": s.min_ms, "n": s.rounds}


# ----- subcommands ----------------------------------------------------------------------------
def cmd_targets(args: argparse.Namespace) -> None:
    for target in targets(args.state):
        print(target.label, target.dims)


def cmd_ncu_target(args: argparse.Namespace) -> None:
    """Run under `ncu --profile-from-start off`: only the calls between profiler start/stop are profiled."""
    import torch

    order = []
    for target in targets(args.state):
        loaded = Loaded(target, args.cache)
        for _ in range(5):  # warm (module load, clocks), not profiled
            loaded.binding.launch()
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        torch.cuda._sleep(1000)  # marker kernel: separates targets in ncu's list
        for _ in range(NCU_CALLS):
            loaded.binding.launch()
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
        order.append(target.label)
        del loaded
        torch.cuda.empty_cache()
    args.out.write_text(json.dumps({"order": order, "calls": NCU_CALLS}, indent=1))


def parse_ncu_csv(text: str) -> list[tuple[str, float]]:
    """ncu --csv --print-units base output -> [(kernel name, gpu__time_duration in ns)] in launch order."""
    start = text.find('"ID","Process ID"')
    if start < 0:
        raise SystemExit("no ncu CSV table found in the ncu output")
    rows = []
    for row in csv.DictReader(io.StringIO(text[start:])):
        if row.get("Metric Name") != "gpu__time_duration.sum":
            continue
        unit = (row.get("Metric Unit") or "ns").strip()
        scale = {"ns": 1.0, "nsecond": 1.0, "us": 1e3, "usecond": 1e3, "ms": 1e6, "msecond": 1e6}.get(unit, 1.0)
        rows.append((int(row["ID"]), row["Kernel Name"], float(row["Metric Value"].replace(",", "")) * scale))
    return [(name, value) for _, name, value in sorted(rows)]


def ncu_per_target(rows: list[tuple[str, float]], order: list[str], calls: int) -> dict[str, dict[str, Any]]:
    groups: list[list[tuple[str, float]]] = []
    for name, value in rows:
        if "spin" in name.lower() or "sleep" in name.lower():
            groups.append([])
        elif groups:
            groups[-1].append((name, value))
    if len(groups) != len(order):
        raise SystemExit(f"ncu groups ({len(groups)}) do not match targets ({len(order)})")
    found = {}
    for label, group in zip(order, groups):
        per_call = max(1, len(group) // calls)
        totals = [sum(v for _, v in group[i:i + per_call]) for i in range(0, per_call * calls, per_call)]
        found[label] = {"ncu_median_us": statistics.median(totals) / 1e3, "ncu_min_us": min(totals) / 1e3,
                        "ncu_max_us": max(totals) / 1e3, "kernels_per_call": per_call,
                        "kernels": sorted({n for n, _ in group})}
    return found


def cmd_fidelity(args: argparse.Namespace) -> None:
    sequence = json.loads(args.seq.read_text())
    ncu = ncu_per_target(parse_ncu_csv(args.ncu.read_text(errors="replace")), sequence["order"], sequence["calls"])
    extras = json.loads(args.extras.read_text()) if args.extras and args.extras.is_file() else {}
    rows = []
    for case, branch, record in suite_branches(args.state):
        label = f"{case}/{branch}"
        timing = record["timing"]
        rows.append(_fidelity_row(label, timing["median_ms"] * 1e3, timing["iqr_ms"] * 1e3,
                                  timing["seed_method"]["mean_ms"] * 1e3, timing["hot"]["median_ms"] * 1e3,
                                  ncu.get(label), "suite", timing["event_offset"]))
    for label, point in extras.get("sweep", {}).items():
        rows.append(_fidelity_row(label, point["cold"]["median_ms"] * 1e3, point["cold"]["iqr_ms"] * 1e3,
                                  point["seed_method_ms"] * 1e3, point["hot_ms"] * 1e3, ncu.get(label), "sweep",
                                  point["event_offset"]))
    args.out.write_text(json.dumps({"rows": rows, "ncu": ncu}, indent=1))
    print(render_fidelity(rows))


def _fidelity_row(label: str, harness_us: float, iqr_us: float, seed_us: float, hot_us: float,
                  ncu: dict[str, Any] | None, kind: str, offset: dict[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {"target": label, "kind": kind, "harness_us": harness_us, "iqr_us": iqr_us,
                           "seed_method_us": seed_us, "hot_us": hot_us,
                           "raw_event_us": offset["raw_event_median_ms"] * 1e3,
                           "offset_us": offset.get("offset_us") if offset.get("applied") else None}
    if ncu:
        reference = ncu["ncu_median_us"]
        row.update(ncu_us=reference, ncu_spread_us=[ncu["ncu_min_us"], ncu["ncu_max_us"]],
                   harness_vs_ncu=harness_us / reference - 1, seed_vs_ncu=seed_us / reference - 1)
        limit = 0.03 if reference >= 20 else 0.10 if reference >= 5 else None
        row["limit"] = limit
        row["pass"] = None if limit is None else abs(harness_us / reference - 1) <= limit
    return row


def render_fidelity(rows: list[dict[str, Any]]) -> str:
    lines = ["| target | ncu gpu__time_duration (µs) | harness cold median (µs) | harness vs ncu | limit | "
             "raw events (µs) | offset (µs) | original method (µs) | original vs ncu | hot median (µs) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ok = "" if r.get("pass") is None else (" ✓" if r["pass"] else " ✗")
        limit = f"±{r['limit']:.0%}" if r.get("limit") else "none (<5 µs)"
        offset = f"{r['offset_us']:.2f}" if r.get("offset_us") is not None else "not applied"
        lines.append(f"| {r['target']} | {r.get('ncu_us', float('nan')):.2f} | {r['harness_us']:.2f} | "
                     f"{r.get('harness_vs_ncu', float('nan')):+.1%}{ok} | {limit} | {r['raw_event_us']:.2f} | {offset} | "
                     f"{r['seed_method_us']:.2f} | {r.get('seed_vs_ncu', float('nan')):+.1%} | {r['hot_us']:.2f} |")
    return "\n".join(lines)


def cmd_extras(args: argparse.Namespace) -> None:
    import torch

    from pytest_dcuopt.timing.device import measure_device
    from pytest_dcuopt.toolchains.torch_device_timer import TorchDeviceTimer

    result: dict[str, Any] = {"sweep": {}, "flush_modes": {}}
    runtime = None
    for target in targets(args.state):
        if target.suite:
            continue
        loaded = Loaded(target, args.cache, runtime)
        runtime = loaded.runtime
        samples = loaded.measure(policy(0.5))
        result["sweep"][target.label] = {
            "dims": target.dims, "cold": summary_ms(samples.seconds), "hot_ms": samples.extra["hot"]["median_ms"],
            "hot_rotated_ms": samples.extra.get("hot_rotated", {}).get("median_ms"),
            "seed_method_ms": samples.extra["seed_method"]["mean_ms"],
            "launch_overhead": samples.extra["launch_overhead"], "launch_hiding": samples.extra["launch_hiding"],
            "event_offset": samples.extra["event_offset"],
            "gbps_cold": (loaded.bytes_moved() or 0) / (statistics.median(samples.seconds)) / 1e9,
        }
        modes = {}
        for mode in ("read", "write", "none"):
            device_timer = TorchDeviceTimer(torch, runtime.device, flush_mode=mode, telemetry=runtime.telemetry)
            measured = measure_device([loaded.binding.launch], policy(0.3), device_timer, loaded.binding.nbytes)
            modes[mode] = summary_ms(measured.seconds)
            del device_timer
        result["flush_modes"][target.label] = modes
        del loaded
        torch.cuda.empty_cache()
        print(target.label, json.dumps(result["sweep"][target.label]["cold"]), {m: round(v["median_ms"] * 1e3, 2) for m, v in modes.items()})
    result["near_limit"] = near_limit(args.state, args.cache, runtime)
    result["telemetry"] = runtime.describe() if runtime else {}
    args.out.write_text(json.dumps(result, indent=1, default=str))
    print(json.dumps(result["near_limit"], indent=1))


def near_limit(state_path: Path, cache: Path, runtime: Any) -> dict[str, Any]:
    """The fastest vector_add branch of the suite at N = 2^28 against a device-to-device copy, same run."""
    import torch

    from pytest_dcuopt.timing.device import measure_device
    from pytest_dcuopt.toolchains.torch_device_timer import TorchDeviceTimer

    branches = [(record["timing"]["median_ms"], branch, record) for case, branch, record in suite_branches(state_path)
                if case == "vector_add"]
    _, champion, record = min(branches)
    target = Target(f"vector_add/{champion}@N={NEAR_LIMIT_N}", "vector_add", champion, ROOT / record["source"],
                    {"N": NEAR_LIMIT_N}, False)
    loaded = Loaded(target, cache, runtime)
    kernel = loaded.measure(policy(2.0))
    kernel_s = statistics.median(kernel.seconds)
    kernel_bytes = 3 * 4 * NEAR_LIMIT_N
    del loaded
    torch.cuda.empty_cache()
    copy_bytes = 4 * NEAR_LIMIT_N  # 1 GiB read + 1 GiB written per copy
    src = torch.randn(NEAR_LIMIT_N, device="cuda")
    dst = torch.empty_like(src)
    device_timer = TorchDeviceTimer(torch, torch.device("cuda"), telemetry=runtime.telemetry if runtime else None)
    copy = measure_device([lambda: dst.copy_(src)], policy(2.0), device_timer, 2 * copy_bytes)
    copy_s = statistics.median(copy.seconds)
    kernel_gbps, copy_gbps = kernel_bytes / kernel_s / 1e9, 2 * copy_bytes / copy_s / 1e9
    return {"champion": champion, "N": NEAR_LIMIT_N, "kernel_median_ms": kernel_s * 1e3, "kernel_GBps": kernel_gbps,
            "kernel_iqr_ms": summary_ms(kernel.seconds)["iqr_ms"], "copy_median_ms": copy_s * 1e3,
            "copy_GBps": copy_gbps, "ratio": kernel_gbps / copy_gbps, "pass": kernel_gbps >= 0.9 * copy_gbps,
            "method": "both timed by timing.device.measure_device (cold: L2 flushed, delay kernel), bytes = reads + writes"}


def cmd_stability(args: argparse.Namespace) -> None:
    runs = [{f"{c}/{b}": r["timing"]["median_ms"] for c, b, r in suite_branches(p)} for p in args.states]
    labels = sorted(set().union(*runs))
    rows = []
    for label in labels:
        medians = [run[label] for run in runs if label in run]
        ratio = max(medians) / min(medians)
        rows.append({"target": label, "medians_ms": medians, "max_over_min": ratio,
                     "applies": min(medians) >= 0.05, "pass": ratio <= 1.02 if min(medians) >= 0.05 else None})
    args.out.write_text(json.dumps({"runs": [str(p) for p in args.states], "rows": rows}, indent=1))
    lines = ["| branch | medians over runs (µs) | max/min | ≥50 µs | ≤1.02 |", "|---|---|---|---|---|"]
    for r in rows:
        ok = "-" if r["pass"] is None else ("✓" if r["pass"] else "✗")
        lines.append(f"| {r['target']} | {', '.join(f'{m * 1e3:.2f}' for m in r['medians_ms'])} | "
                     f"{r['max_over_min']:.4f} | {'yes' if r['applies'] else 'no'} | {ok} |")
    print("\n".join(lines))


def cmd_prebuild(args: argparse.Namespace) -> None:
    """Build every .cu/.hip example into the suite's cache in parallel (the suite then only hits the cache)."""
    from concurrent.futures import ThreadPoolExecutor

    from pytest_dcuopt.toolchains.cache import BuildCache
    from pytest_dcuopt.toolchains.cuda import CudaToolchain

    toolchain, cache = CudaToolchain(arch=ARCH), BuildCache(args.cache)
    sources = sorted(p for p in KERNELS.rglob("kernel.*") if p.suffix in (".cu", ".hip"))
    hip = [p for p in sources if p.suffix == ".hip"]
    if hip:  # the HIP header copy is made once, before the pool
        toolchain.build(hip[0], cache)
    with ThreadPoolExecutor(max_workers=min(16, os.cpu_count() or 2)) as pool:
        for source, artifact in zip(sources, pool.map(lambda p: toolchain.build(p, cache), sources)):
            print(f"{source.relative_to(KERNELS)}: {artifact.seconds:.1f} s cached={artifact.cached}")


def cmd_env(args: argparse.Namespace) -> None:
    info: dict[str, Any] = {"python": platform.python_version(), "platform": platform.platform()}
    for name, command in (("nvidia_smi", ["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,"
                                          "clocks.mem,temperature.gpu,power.draw,power.limit,persistence_mode",
                                          "--format=csv"]),
                          ("nvcc", ["nvcc", "--version"]), ("ncu", ["ncu", "--version"]),
                          ("cuobjdump", ["cuobjdump", "--version"])):
        try:
            info[name] = subprocess.run(command, capture_output=True, text=True, timeout=60).stdout.strip()
        except (OSError, subprocess.TimeoutExpired) as exc:
            info[name] = f"unavailable: {exc}"
    import torch

    info["torch"] = torch.__version__
    if torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        info.update(device=p.name, sms=p.multi_processor_count, l2_bytes=getattr(p, "L2_cache_size", None),
                    memory_bytes=p.total_memory, capability=f"{p.major}.{p.minor}")
    args.out.write_text(json.dumps(info, indent=1))
    print(json.dumps(info, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("targets", "ncu-target", "fidelity", "extras"):
        p = sub.add_parser(name)
        p.add_argument("--state", type=Path, required=True)
        p.add_argument("--cache", type=Path, default=ROOT / ".dcuopt/build-cache")
        p.add_argument("--out", type=Path, default=Path("/dev/stdout"))
        if name == "fidelity":
            p.add_argument("--ncu", type=Path, required=True)
            p.add_argument("--seq", type=Path, required=True)
            p.add_argument("--extras", type=Path)
    p = sub.add_parser("stability")
    p.add_argument("states", type=Path, nargs="+")
    p.add_argument("--out", type=Path, required=True)
    p = sub.add_parser("prebuild")
    p.add_argument("--cache", type=Path, required=True)
    p = sub.add_parser("env")
    p.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    {"targets": cmd_targets, "ncu-target": cmd_ncu_target, "fidelity": cmd_fidelity, "extras": cmd_extras,
     "stability": cmd_stability, "env": cmd_env, "prebuild": cmd_prebuild}[args.command](args)


if __name__ == "__main__":
    started = time.time()
    main()
    print(f"[{sys.argv[1]} took {time.time() - started:.1f} s]", file=sys.stderr)
