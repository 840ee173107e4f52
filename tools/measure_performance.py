"""Measure the example suite's wall time (cold and warm build cache) and the harness's overhead per benchmark case.

Usage: .venv/bin/python tools/measure_performance.py [--out docs/performance-data.json]
Runs pytest in subprocesses on this machine; prints a Markdown table. Nothing here is asserted: these are figures.
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from pytest_dcuopt.report.state import find_case  # cases are keyed by their path relative to the rootdir

ROOT = Path(__file__).resolve().parent.parent
TRIVIAL_KERNEL = 'extern "C" void solve(const float* x, float* y, int N) { for (int i = 0; i < N; ++i) y[i] = x[i]; }\n'
TRIVIAL_REF = 'shapes = {"x": ("N",), "y": ("N",)}\ndim_ranges = {"N": (1, 64)}\n\ndef reference(x, y, N):\n    y.copy_(x)\n'


def pytest(args: list[str], cwd: Path) -> tuple[float, int]:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], cwd=cwd,
                          capture_output=True, text=True)
    return time.perf_counter() - start, proc.returncode


def suite_wall_times(work: Path, device_timer: str) -> dict[str, float]:
    cache = work / "cache"
    cold, rc_cold = pytest(["kernels", f"--dcuopt-toolchain={device_timer}", f"--dcuopt-cache-dir={cache}",
                            f"--dcuopt-run-dir={work / 'cold'}"], ROOT)
    warm, rc_warm = pytest(["kernels", f"--dcuopt-toolchain={device_timer}", f"--dcuopt-cache-dir={cache}",
                            f"--dcuopt-run-dir={work / 'warm'}"], ROOT)
    builds = [b["build"]["seconds"] for c in json.loads((work / "cold" / "state.json").read_text())["cases"].values()
              for t in c["toolchains"].values() for b in t["branches"].values() if b.get("build")]
    return {"cold_s": round(cold, 1), "warm_s": round(warm, 1), "cold_build_s": round(sum(builds), 2),
            "builds": len(builds), "exit_cold": rc_cold, "exit_warm": rc_warm}


def overhead_per_case(work: Path, branches: int = 10) -> dict[str, float]:
    """Time benchmark items of a trivial kernel; overhead = item wall time - time spent measuring in the worker."""
    case = work / "trivial"
    case.mkdir()
    (case / "ref.py").write_text(TRIVIAL_REF)
    (case / "dims.json").write_text('{"N": 16}')
    (case / "kernel.cpp").write_text(TRIVIAL_KERNEL)
    for index in range(branches):
        (case / "branches" / f"b{index}").mkdir(parents=True)
        (case / "branches" / f"b{index}" / "kernel.cpp").write_text(TRIVIAL_KERNEL + f"// variant {index}\n")
    junit = work / "junit.xml"
    common = ["trivial", "--dcuopt-toolchain=cpu", f"--dcuopt-cache-dir={work / 'cache2'}", f"--junitxml={junit}",
              "--dcuopt-max-time=0.05", "--dcuopt-warmup=0.01", "--dcuopt-interleave=0", f"--dcuopt-run-dir={work / 'ovh'}"]
    pytest(common, work)  # cold: builds the branches
    pytest(common, work)  # warm: correctness then benchmarks, as in a normal run (each branch's worker is up)
    durations = {c.get("name"): float(c.get("time")) for c in ET.parse(junit).getroot().iter("testcase")}
    state = json.loads((work / "ovh" / "state.json").read_text())
    branches_state = find_case(state, "trivial")["toolchains"]["cpu"]["branches"]
    overheads, inner = [], []
    for name, branch in branches_state.items():
        item = durations[f"test_benchmark_cpu[{name}]"]
        overheads.append(item - branch["timing"]["measure_wall_s"])
        inner.append(branch["timing"]["harness_overhead_s"])
    correctness = [durations[f"test_correctness_cpu[{name}]"] for name in branches_state]
    return {"items": len(overheads), "benchmark_item_overhead_median_s": round(statistics.median(overheads), 4),
            "benchmark_item_overhead_max_s": round(max(overheads), 4),
            "inside_run_benchmark_median_s": round(statistics.median(inner), 4),
            "correctness_item_median_s": round(statistics.median(correctness), 4),
            "worker_start_s": round(worker_start_seconds(case, work), 4)}


def worker_start_seconds(case: Path, work: Path, repeats: int = 5) -> float:
    """Median time to start an isolated worker and load a built kernel into it (paid once per branch)."""
    from pytest_dcuopt.case.cabi import parse_solve_signature
    from pytest_dcuopt.run.isolation import IsolatedKernel, WorkerSpec
    from pytest_dcuopt.toolchains import make_toolchain
    from pytest_dcuopt.toolchains.cache import BuildCache

    toolchain = make_toolchain("cpu")
    artifact = toolchain.build(case / "kernel.cpp", BuildCache(work / "cache2"))
    params = parse_solve_signature((case / "kernel.cpp").read_text())
    times = []
    for _ in range(repeats):
        kernel = IsolatedKernel(WorkerSpec("trivial", "cpu", None, (), artifact, params, work / "w.log"), 60.0)
        start = time.perf_counter()
        kernel._start()
        times.append(time.perf_counter() - start)
        kernel.close()
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path)
    parser.add_argument("--device_timer", default="cpu")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="dcuopt-perf-"))
    try:
        figures = {"suite": suite_wall_times(work, args.device_timer), "overhead": overhead_per_case(work)}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(figures, indent=2))
    if args.out:
        args.out.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
