"""The check of synchronizing and allocating solves on a CUDA GPU (driven by tools/device/sync_check.sh).

Subcommands (run from the repository root; the case is a copy of tests/data/cases/sync_solve):
  prebuild    build every branch of the case into the build cache the pytest runs use
  ncu-target  the program ncu runs: each branch's calls between cudaProfilerStart/Stop, a marker kernel between
              branches (the same builds, buffers and dims as the pytest runs)
  summary     per branch over the runs' state.json files: method, detection verdict, quality, medians per run,
              max/min, and the medians against ncu's gpu__time_duration (kernels per call summed)
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from evidence_summary import suite_timings  # beside this script: case/branch -> timing of cuda branches

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

NCU_CALLS = 7
STABILITY_LIMIT = 1.02  # max/min of the fresh-process medians
NCU_LIMIT = 0.03  # |median / ncu - 1| for kernels >= 20 us


def branch_sources(case: Path) -> dict[str, Path]:
    """branch name -> kernel.cu, the baseline first (the plugin's naming)."""
    found = {"baseline": case / "kernel.cu"}
    for kernel in sorted(case.glob("branches/*/kernel.cu")):
        found[kernel.parent.name] = kernel
    return found


def cmd_prebuild(args: argparse.Namespace) -> None:
    from pytest_dcuopt.toolchains.cache import BuildCache
    from pytest_dcuopt.toolchains.cuda import CudaToolchain

    toolchain = CudaToolchain()
    for case in args.case:
        for name, source in branch_sources(case).items():
            artifact = toolchain.build(source, BuildCache(args.cache))
            print(f"{case.name}/{name}: {artifact.path}")


def case_dims(case: Path) -> dict[str, Any]:
    """The dims the cuda toolchain times the case at: dims.json, overridden by dims.cuda.json."""
    dims = json.loads((case / "dims.json").read_text())
    override = case / "dims.cuda.json"
    if override.is_file():
        dims.update(json.loads(override.read_text()))
    return dims


def cmd_ncu_target(args: argparse.Namespace) -> None:
    """Run under `ncu --profile-from-start off`: only the calls between profiler start/stop are profiled. With
    --tiny, the harness's calibration kernel (a one-element fill) comes first as target `tiny/fill`."""
    import torch

    from pytest_dcuopt.case.buffers import resolve_shapes
    from pytest_dcuopt.case.cabi import parse_solve_signature
    from pytest_dcuopt.case.ref_loader import load_reference
    from pytest_dcuopt.toolchains.binding import BindSpec
    from pytest_dcuopt.toolchains.cache import BuildCache
    from pytest_dcuopt.toolchains.cuda import CudaToolchain

    toolchain = CudaToolchain()
    runtime = toolchain.runtime()
    order = []

    def profile(label: str, launch: Any) -> None:
        for _ in range(5):  # warm (module load, clocks), not profiled
            launch()
        torch.cuda.synchronize()
        torch.cuda.profiler.start()  # type: ignore[no-untyped-call]
        torch.cuda._sleep(1000)  # type: ignore[no-untyped-call]  # marker kernel: separates targets in ncu's list
        for _ in range(NCU_CALLS):
            launch()
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()  # type: ignore[no-untyped-call]
        order.append(label)

    if args.tiny:
        tiny = torch.zeros(1, dtype=torch.float32, device="cuda")
        profile("tiny/fill", tiny.zero_)
    for case in args.case:
        dims = case_dims(case)
        reference = load_reference(case / "ref.py", dims)
        for name, source in branch_sources(case).items():
            params = parse_solve_signature(source.read_text(), str(source))
            kernel = toolchain.load(toolchain.build(source, BuildCache(args.cache)), params)
            spec = BindSpec(dict(dims), 0, resolve_shapes(params, reference.shapes, dims, str(source)),
                            reference.inputs)
            binding = kernel.bind(spec, runtime)
            profile(f"{case.name}/{name}", binding.launch)
            del binding
            torch.cuda.empty_cache()
    args.out.write_text(json.dumps({"order": order, "calls": NCU_CALLS}, indent=1))


def _us(value_ms: float | None) -> float | None:
    return None if value_ms is None else round(value_ms * 1e3, 3)


def _pct(value: float | None, against: float | None) -> float | None:
    return None if value is None or not against else round((value / against - 1) * 100, 2)


def branch_summary(label: str, timings: list[dict[str, Any]], ncu: dict[str, Any] | None,
                   ncu_none: dict[str, Any] | None = None, limit: float = 0.03,
                   from_us: float = 20.0) -> dict[str, Any]:
    """One branch over the runs: what each run said, how far apart the medians are, and how far from ncu."""
    medians = [round(t["median_ms"] * 1e3, 3) for t in timings]
    kernels_only = [_us(((t.get("sync") or {}).get("kernels_only") or {}).get("median_ms")) for t in timings]
    ncu_us = round(ncu["ncu_median_us"], 3) if ncu else None
    middle = statistics.median(medians) if medians else None
    only = [k for k in kernels_only if k is not None]
    row: dict[str, Any] = {
        "label": label,
        "method": sorted({t.get("method", "?") for t in timings}),
        "verdict": sorted({(t.get("sync_detected") or {}).get("verdict", "?") for t in timings}),
        "host_call_us": [(t.get("sync_detected") or {}).get("host_call_us") for t in timings],
        "primary": sorted({(t.get("sync") or {}).get("primary", "cold events") for t in timings}),
        "quality": [t.get("quality", "?") for t in timings],
        "rounds": [t.get("rounds") for t in timings],
        "stop_reason": [t.get("stop_reason") for t in timings],
        "medians_us": medians,
        "max_over_min": round(max(medians) / min(medians), 4) if medians and min(medians) else None,
        "ncu_us": ncu_us, "ncu_kernels_per_call": ncu.get("kernels_per_call") if ncu else None,
        "ncu_no_flush_us": round(ncu_none["ncu_median_us"], 3) if ncu_none else None,
        "offsets_us": [(t.get("event_offset") or {}).get("offset_us") for t in timings],
        "median_vs_ncu_pct": _pct(middle, ncu_us),
        "kernels_only_us": kernels_only if only else None,
        "kernels_only_vs_ncu_pct": _pct(statistics.median(only), ncu_us) if only else None,
    }
    compared = row["kernels_only_vs_ncu_pct"] if only else row["median_vs_ncu_pct"]
    row["stable"] = row["max_over_min"] is not None and row["max_over_min"] <= STABILITY_LIMIT
    row["agrees_with_ncu"] = (None if compared is None or ncu_us is None or ncu_us < from_us else
                              abs(compared) <= limit * 100)
    return row


def render(rows: list[dict[str, Any]]) -> str:
    head = ("| branch | method (verdict) | quality | medians, runs (us) | max/min | ncu (us) | ncu, no flush (us) | "
            "median vs ncu | kernels only vs ncu | stable | agrees with ncu |")
    lines = [head, "|" + "---|" * 11]
    for r in rows:
        method = f"{','.join(r['method'])} ({','.join(r['verdict'])})"
        quality = ",".join(sorted(set(r["quality"])))
        medians = ", ".join("-" if m is None else f"{m:.2f}" for m in r["medians_us"])
        lines.append(f"| {r['label']} | {method} | {quality} | {medians} | {r['max_over_min']} | {r['ncu_us']} | "
                     f"{r['ncu_no_flush_us']} | {_signed(r['median_vs_ncu_pct'])} | {_signed(r['kernels_only_vs_ncu_pct'])} | "
                     f"{_yes(r['stable'])} | {_yes(r['agrees_with_ncu'])} |")
    lines += ["", f"Limits: max/min <= {STABILITY_LIMIT} over the fresh-process runs; "
                  "`agrees with ncu`: within the --limit of ncu's gpu__time_duration from --from-us up. `kernels only` (sync method) "
                  "leaves the call's copies and memsets out, as ncu does; the async method's cold events include them "
                  "(d2d_copy: the copy is in its median, not in ncu's figure)."]
    return "\n".join(lines)


def _yes(value: bool | None) -> str:
    return {True: "yes", False: "NO", None: "-"}[value]


def _signed(value: float | None) -> str:
    return "-" if value is None else f"{value:+.2f}%"


def cmd_summary(args: argparse.Namespace) -> None:
    from h200_evidence import ncu_per_target, parse_ncu_csv

    runs = [suite_timings(path) for path in args.states]
    ncu: dict[str, Any] = {}
    ncu_none: dict[str, Any] = {}
    problems = []
    if args.ncu_none and args.ncu_none.is_file() and args.seq and args.seq.is_file():
        sequence = json.loads(args.seq.read_text())
        try:
            ncu_none = ncu_per_target(parse_ncu_csv(args.ncu_none.read_text(errors="replace")), sequence["order"],
                                      sequence["calls"])
        except SystemExit as exc:
            problems.append(f"ncu (no flush): {exc}")
    if args.ncu and args.ncu.is_file() and args.seq and args.seq.is_file():
        sequence = json.loads(args.seq.read_text())
        try:
            ncu = ncu_per_target(parse_ncu_csv(args.ncu.read_text(errors="replace")), sequence["order"],
                                 sequence["calls"])
        except SystemExit as exc:  # the parsers report a malformed CSV this way
            problems.append(f"ncu: {exc}")
    else:
        problems.append("ncu: no ncu CSV or sequence file; the ncu columns are empty")
    labels = sorted({label for run in runs for label in run})
    rows = [branch_summary(label, [run[label] for run in runs if label in run], ncu.get(label), ncu_none.get(label),
                           args.limit, args.from_us) for label in labels]
    missing = {label: [i + 1 for i, run in enumerate(runs) if label not in run] for label in labels}
    problems += [f"{label}: not timed in run(s) {numbers}" for label, numbers in missing.items() if numbers]
    summary = {"states": [str(p) for p in args.states], "rows": rows, "ncu": ncu, "ncu_no_flush": ncu_none,
               "problems": problems}
    args.out.write_text(json.dumps(summary, indent=1))
    text = render(rows) + ("\n\nProblems:\n" + "\n".join(f"- {p}" for p in problems) if problems else "")
    args.md.write_text(text + "\n")
    print(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("prebuild", "ncu-target"):
        p = sub.add_parser(name)
        p.add_argument("--case", type=Path, nargs="+", required=True)
        p.add_argument("--cache", type=Path, required=True)
        if name == "ncu-target":
            p.add_argument("--out", type=Path, required=True)
            p.add_argument("--tiny", action="store_true", help="profile the calibration's one-element fill first")
    p = sub.add_parser("summary")
    p.add_argument("--states", type=Path, nargs="+", required=True)
    p.add_argument("--ncu", type=Path)
    p.add_argument("--seq", type=Path)
    p.add_argument("--ncu-none", type=Path, help="a second ncu CSV, taken with --cache-control none")
    p.add_argument("--limit", type=float, default=NCU_LIMIT, help="|median / ncu - 1| allowed")
    p.add_argument("--from-us", type=float, default=20.0, help="the limit applies from this ncu time up")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--md", type=Path, required=True)
    args = parser.parse_args()
    {"prebuild": cmd_prebuild, "ncu-target": cmd_ncu_target, "summary": cmd_summary}[args.command](args)


if __name__ == "__main__":
    main()
