"""`dcuopt compare-timers`: one branch timed by the harness and by the timers it is usually compared with, one process
per timer, side by side with each figure's ratio to ncu (docs/gpu-timing.md, "Comparing timers").

The harness runs as a user runs it (a pytest session of the branch's benchmark); its record gives the dims every other
timer then uses. `triton.testing.do_bench`, nvbench's Python bindings (`cuda.bench`) and ncu each get a fresh process
that builds the branch through the harness's own toolchain and build cache and binds the same buffers, so all four
time the same machine code on the same inputs. A timer that cannot run here is listed with the reason.
"""
from __future__ import annotations

import argparse
import csv
import importlib.util
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

TIMERS = ("harness", "do_bench", "nvbench", "ncu")
TRUTH = "ncu"
GPU_TOOLCHAINS = ("cuda", "hip")
NCU_CALLS = 7  # profiled calls; the figure is their median
RESULT = "compare-timers result: "  # a child's last line: this prefix, then its JSON
NCU_METRIC = "gpu__time_duration.sum"
NVBENCH_TAG = "nv/cold/time/gpu/mean"  # nvbench's headline GPU time: the mean of its cold samples


@dataclass
class Figure:
    """One timer's figure for the branch, or why there is none."""

    timer: str
    ms: float | None = None
    statistic: str = ""  # what the figure is (a median of how many samples, a mean, ...)
    why_not: str = ""  # why this timer gave no figure

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


# ----- the table -----------------------------------------------------------------------------------------------------
def table(figures: Sequence[Figure]) -> str:
    """A Markdown table: per timer its figure, its ratio to ncu's (when ncu measured), and what the figure is."""
    truth = next((f.ms for f in figures if f.timer == TRUTH and f.ms), None)
    lines = ["| timer | time (us) | vs ncu | what it is |", "|---|---|---|---|"]
    for figure in figures:
        if figure.ms is None:
            lines.append(f"| {figure.timer} | - | - | not measured: {figure.why_not} |")
            continue
        if figure.timer == TRUTH:
            ratio = "(reference)"
        else:
            ratio = f"{figure.ms / truth - 1:+.1%}" if truth else "- (no ncu figure)"
        lines.append(f"| {figure.timer} | {figure.ms * 1e3:.4g} | {ratio} | {figure.statistic} |")
    return "\n".join(lines)


# ----- reading each timer's output -----------------------------------------------------------------------------------
def harness_figure(state: Mapping[str, Any], toolchain: str, branch: str) -> tuple[Figure, dict[str, Any]]:
    """The harness's figure for `branch` from its session's state.json, and the dims it timed (for the others)."""
    records = [data["toolchains"][toolchain]["branches"][branch] for data in state.get("cases", {}).values()
               if branch in data.get("toolchains", {}).get(toolchain, {}).get("branches", {})]
    if not records:
        return Figure("harness", why_not=f"the session has no {toolchain} record of branch {branch!r}"), {}
    record = records[0]
    timing = record.get("timing") or next((size["timing"] for size in (record.get("sizes") or {}).values()
                                          if size.get("timing")), None)
    if not timing:
        why = record.get("skipped") or (record.get("error") or {}).get("message") or "the branch was not timed"
        return Figure("harness", why_not=f"{branch}: {why}"), {}
    what = f"median of {timing['rounds']} {timing.get('mode', '')} samples ({timing.get('timer', '')})"
    return Figure("harness", float(timing["median_ms"]), " ".join(what.split())), dict(timing.get("dims") or {})


def child_figure(timer: str, output: str) -> Figure:
    """A child's figure from the last `compare-timers result:` line of its output."""
    lines = [line for line in output.splitlines() if line.startswith(RESULT)]
    if not lines:
        tail = " | ".join(output.strip().splitlines()[-3:]) or "no output"
        return Figure(timer, why_not=f"its process gave no result ({tail})")
    data = json.loads(lines[-1][len(RESULT):])
    return Figure(timer, data.get("ms"), data.get("statistic", ""), data.get("why_not", ""))


def ncu_call_times_ms(text: str) -> list[float]:
    """ncu's `--csv --print-units base` output -> the GPU time of each profiled call (milliseconds): the kernels
    between two marker kernels (torch's sleep kernel, launched before each call) summed, so a solve of several
    kernels counts as one call, as the harness times it."""
    start = text.find('"ID",')
    if start < 0:
        raise ValueError("no ncu CSV table in ncu's output (was the metric collected? see the log)")
    rows = []
    for row in csv.DictReader(io.StringIO(text[start:])):
        if row.get("Metric Name") != NCU_METRIC:
            continue
        unit = (row.get("Metric Unit") or "ns").strip()
        scale = {"ns": 1.0, "nsecond": 1.0, "us": 1e3, "usecond": 1e3, "ms": 1e6, "msecond": 1e6}[unit]
        rows.append((int(row["ID"]), row["Kernel Name"], float(row["Metric Value"].replace(",", "")) * scale))
    calls: list[float] = []
    for _, name, ns in sorted(rows):
        if "sleep" in name.lower() or "spin" in name.lower():
            calls.append(0.0)
        elif calls:
            calls[-1] += ns * 1e-6
    return [t for t in calls if t > 0]


def nvbench_mean_ms(report: Mapping[str, Any]) -> float:
    """nvbench's `--json` report -> its cold GPU time (the mean of its cold samples), in milliseconds."""
    for bench in report.get("benchmarks", []):
        for state in bench.get("states", []):
            for summary in state.get("summaries", []):
                if summary.get("tag") == NVBENCH_TAG:
                    value = next(d["value"] for d in summary["data"] if d.get("name") == "value")
                    return float(value) * 1e3
    raise ValueError(f"no {NVBENCH_TAG!r} summary in nvbench's report")


# ----- which timers can run here -------------------------------------------------------------------------------------
def module_missing(name: str, install: str) -> str | None:
    try:
        found = importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        found = False
    return None if found else f"{name} is not installed ({install})"


def gpu_missing() -> str | None:
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if not torch.cuda.is_available():
        return "no GPU: torch sees no CUDA or HIP device"
    return None


def why_unavailable(timer: str, toolchain: str) -> str | None:
    """Why `timer` cannot time a `toolchain` branch on this machine, or None when it can."""
    if timer == "harness":
        return None
    if toolchain not in GPU_TOOLCHAINS:
        return f"times GPU kernels; the {toolchain} toolchain runs on the host (only the harness column applies)"
    if timer == "ncu" and toolchain != "cuda":
        return "Nsight Compute profiles NVIDIA GPUs only"
    if timer == "do_bench":
        missing = module_missing("triton", "pip install triton")
    elif timer == "nvbench":
        missing = module_missing("cuda.bench", "pip install 'cuda-bench[cu13]' or [cu12]")
    else:
        missing = None if shutil.which("ncu") else "ncu (Nsight Compute) is not on PATH"
    return missing or gpu_missing()


# ----- the parent: one process per timer -----------------------------------------------------------------------------
def run_harness(args: argparse.Namespace, work: Path) -> tuple[Figure, dict[str, Any], Path]:
    run_dir = work / "harness"
    command = [sys.executable, "-m", "pytest", str(args.case), "-p", "no:cacheprovider", "-q",
               "-k", f"test_benchmark_{args.toolchain} and {args.branch}", f"--dcuopt-toolchain={args.toolchain}",
               f"--dcuopt-run-dir={run_dir}", f"--dcuopt-cache-dir={work / 'cache'}", "--dcuopt-interleave=0",
               f"--dcuopt-max-time={args.max_time:g}", *args.pytest_args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
    (work / "harness.log").write_text(done.stdout + done.stderr)
    state_path = run_dir / "state.json"
    if not state_path.exists():
        return Figure("harness", why_not=f"pytest exited {done.returncode} without a state.json "
                                         f"(see {work / 'harness.log'})"), {}, work / "cache"
    figure, dims = harness_figure(json.loads(state_path.read_text()), args.toolchain, args.branch)
    return figure, dims, work / "cache"


def child_command(timer: str, args: argparse.Namespace, dims: Mapping[str, Any], cache: Path, work: Path) -> \
        list[str]:
    child = [sys.executable, "-m", "pytest_dcuopt.cli.compare_timers", timer, "--case", str(args.case),
             "--branch", args.branch, "--toolchain", args.toolchain, "--dims", json.dumps(dict(dims)),
             "--cache", str(cache), "--work", str(work)]
    if timer == "ncu":
        return ["ncu", "--metrics", NCU_METRIC, "--cache-control", "all", "--clock-control", "none",
                "--profile-from-start", "off", "--csv", "--print-units", "base", *child]
    return child


def run_timer(timer: str, args: argparse.Namespace, dims: Mapping[str, Any], cache: Path, work: Path) -> Figure:
    done = subprocess.run(child_command(timer, args, dims, cache, work), capture_output=True, text=True,
                          timeout=args.timeout)
    (work / f"{timer}.log").write_text(done.stdout + done.stderr)
    if timer != "ncu":
        return child_figure(timer, done.stdout + done.stderr)
    try:
        calls = ncu_call_times_ms(done.stdout)
    except ValueError as exc:
        return Figure(timer, why_not=f"{exc} ({work / 'ncu.log'})")
    if not calls:
        return Figure(timer, why_not=f"ncu profiled no call ({work / 'ncu.log'})")
    return Figure(timer, statistics.median(calls), f"median of {len(calls)} calls, {NCU_METRIC} summed per call "
                                                   "(--cache-control all: caches flushed per kernel)")


def compare(args: argparse.Namespace) -> int:
    timers = [t.strip() for t in args.timers.split(",") if t.strip()]
    unknown = sorted(set(timers) - set(TIMERS))
    if unknown:
        print(f"dcuopt compare-timers: unknown timer(s) {', '.join(unknown)}; choose from {', '.join(TIMERS)}",
              file=sys.stderr)
        return 2
    work = Path(args.work or tempfile.mkdtemp(prefix="dcuopt-compare-timers-")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    args.case = args.case.resolve()
    figure, dims, cache = run_harness(args, work)
    figures = [figure] if "harness" in timers else []
    for timer in (t for t in TIMERS if t in timers and t != "harness"):
        why = why_unavailable(timer, args.toolchain)
        if why is None and not dims:
            why = "the harness gave no dims to time at (its column says why)"
        figures.append(Figure(timer, why_not=why) if why else run_timer(timer, args, dims, cache, work))
    print(f"{args.case.name} / {args.toolchain} / {args.branch} at {json.dumps(dims)}")
    print(table(figures))
    (work / "compare-timers.json").write_text(json.dumps(
        {"case": str(args.case), "toolchain": args.toolchain, "branch": args.branch, "dims": dims,
         "figures": [f.to_json() for f in figures]}, indent=1))
    print(f"logs and compare-timers.json: {work}")
    return 0 if any(f.ms is not None for f in figures) else 1


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("compare-timers", help="time one branch with the harness, triton's do_bench, "
                                                        "nvbench and ncu, side by side")
    parser.add_argument("case", type=Path, help="the case folder (ref.py, dims.json, kernels)")
    parser.add_argument("--branch", default="baseline", help="the branch to time (default: baseline)")
    parser.add_argument("--toolchain", default="cuda", help="the toolchain whose kernel is timed (default: cuda)")
    parser.add_argument("--timers", default=",".join(TIMERS), help=f"which (default: {','.join(TIMERS)})")
    parser.add_argument("--max-time", type=float, default=1.0, help="the harness's --dcuopt-max-time (default 1)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds each timer's process may take")
    parser.add_argument("--work", type=Path, default=None, help="where logs and results go (default: a temp dir)")
    parser.add_argument("--pytest-args", nargs=argparse.REMAINDER, default=[],
                        help="the rest is passed to the harness's pytest session")
    parser.set_defaults(run=compare)


# ----- the children: one timer each, in a process of its own ---------------------------------------------------------
def load_binding(case_dir: Path, branch: str, toolchain_name: str, dims: Mapping[str, Any], cache: Path) -> Any:
    """The branch built through the harness's toolchain and build cache, its buffers bound at `dims` (seed 0), as a
    worker binds them."""
    from ..case.buffers import resolve_shapes
    from ..case.cabi import parse_solve_signature
    from ..case.model import load_case
    from ..case.ref_loader import load_reference
    from ..toolchains import make_toolchain
    from ..toolchains.binding import BindSpec
    from ..toolchains.cache import BuildCache

    toolchain = make_toolchain(toolchain_name)
    case = load_case(case_dir).for_toolchain(toolchain_name)
    sources = [b.source for b in case.sources_for(type(toolchain).extensions) if b.name == branch]
    if not sources:
        raise SystemExit(f"{case_dir}: no {toolchain_name} source for branch {branch!r}")
    reference = load_reference(case.ref_path, dims)
    params = parse_solve_signature(sources[0].read_text(), str(sources[0]))
    kernel = toolchain.load(toolchain.build(sources[0], BuildCache(cache)), params)
    shapes = resolve_shapes(params, reference.shapes, dims, str(sources[0]))
    return kernel.bind(BindSpec(dict(dims), 0, shapes, reference.inputs), toolchain.runtime())


def child_do_bench(binding: Any, work: Path) -> dict[str, Any]:
    testing: Any = importlib.import_module("triton.testing")  # optional: untyped, absent on CPU machines
    ms = testing.do_bench(binding.launch, return_mode="median")
    return {"ms": float(ms), "statistic": "triton.testing.do_bench median (its defaults: 25 ms warm-up, 100 ms of "
                                          "repetitions, L2 cleared by a 256 MB write before each)"}


def child_nvbench(binding: Any, work: Path) -> dict[str, Any]:
    bench: Any = importlib.import_module("cuda.bench")  # optional: nvbench's bindings, absent on most machines

    def timed(state: Any) -> None:
        # The kernel runs on the legacy default stream, which is ordered with every blocking stream (this assumes
        # nvbench's is one); sync=True: the solve may synchronize itself.
        state.exec(lambda launch: binding.launch(), sync=True)

    bench.register(timed)
    report = work / "nvbench.json"
    bench.run_all_benchmarks(["nvbench", "--json", str(report), "--devices", "0"])
    return {"ms": nvbench_mean_ms(json.loads(report.read_text())),
            "statistic": "nvbench cold GPU time (the mean of its cold samples, L2 flushed before each)"}


def child_ncu(binding: Any, work: Path) -> dict[str, Any]:
    import torch

    cuda: Any = torch.cuda  # its profiler and _sleep are untyped
    for _ in range(5):  # module load and clocks, not profiled
        binding.launch()
    cuda.synchronize()
    cuda.profiler.start()
    for _ in range(NCU_CALLS):
        cuda._sleep(1000)  # a marker kernel before each call: the parent sums the kernels between markers
        binding.launch()
    cuda.synchronize()
    cuda.profiler.stop()
    return {"ms": None, "statistic": "", "why_not": "ncu's figures are read from its own output"}


CHILDREN = {"do_bench": child_do_bench, "nvbench": child_nvbench, "ncu": child_ncu}


def child_main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m pytest_dcuopt.cli.compare_timers")
    parser.add_argument("timer", choices=sorted(CHILDREN))
    parser.add_argument("--case", type=Path, required=True)
    parser.add_argument("--branch", required=True)
    parser.add_argument("--toolchain", required=True)
    parser.add_argument("--dims", type=json.loads, required=True)
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument("--work", type=Path, required=True)
    args = parser.parse_args(argv)
    binding = load_binding(args.case, args.branch, args.toolchain, args.dims, args.cache)
    result = CHILDREN[args.timer](binding, args.work)
    print(RESULT + json.dumps(result), flush=True)
    os._exit(0)  # nothing left to tear down that could fail after the result is out (CUDA contexts at exit)


if __name__ == "__main__":
    sys.exit(child_main(sys.argv[1:]))
