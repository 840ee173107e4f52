"""Summaries and archives of the H200 evidence (docs/evidence/README.md says what each file is).

The raw files of an evidence run (nine ~450 KB state.json, pytest-benchmark JSON, logs, ncu CSV,
histograms) are too large for the code tree. This script computes, from those raw files, every figure
docs/gpu-timing.md quotes that is not in a kept summary file, writes one small `summary.json` per
evidence set, and packs the raw files that are kept into one `raw.tar.xz` per set (members named
relative to docs/evidence/h200, so `tar -xJf <set>/raw.tar.xz -C docs/evidence/h200` restores them
where the evidence commands wrote them). Files listed under DROPPED are not packed: their figures are
in the summaries, and they stay in git history (the README names the commit).

  python3 tools/device/evidence_summary.py --raw <folder holding the unpacked h200 evidence> \
      --out docs/evidence/h200 [--pack]

Reads JSON, logs and CSV only (no GPU, no torch); the ncu CSV is parsed with h200_evidence.py's parser.
"""
from __future__ import annotations

import argparse
import gzip
import io
import json
import lzma
import re
import statistics
import sys
import tarfile
from collections import Counter
from pathlib import Path
from typing import Any, Iterable

sys.path.insert(0, str(Path(__file__).resolve().parent))

from h200_evidence import ncu_per_target, parse_ncu_csv  # noqa: E402

# Per set: the raw files packed into <set>/raw.tar.xz, and the files kept as they are.
SETS: dict[str, dict[str, list[str]]] = {
    ".": {
        "plain": ["env.json", "fidelity.json", "stability.json"],
        "pack": ["runs/run1.state.json", "runs/run2.state.json", "runs/run3.state.json", "runs/run4.state.json",
                 "runs/run5.state.json", "runs/run1.summary.md", "runs/run2.summary.md", "runs/run3.summary.md",
                 "runs/run4.summary.md", "runs/run5.summary.md", "runs/run1.log", "extras.json", "extras.log",
                 "fidelity.log", "ncu.csv", "ncu-seq.json", "benchmark-compare.txt", "histograms/h-matmul_cuda.svg",
                 "histograms/h-row_softmax_cuda.svg", "histograms/h-row_sum_cuda.svg",
                 "histograms/h-vector_add_cuda.svg", "log_F.txt", "log_G.txt", "log_H.txt", "tests.log"],
    },
    "bracket-probe": {"plain": [], "pack": ["probe.json", "probe-ncu.csv", "probe-seq.json", "measure.log", "ncu.log",
                                            "prebuild.log"]},
    "bracket-check": {"plain": ["fidelity.json"],
                      "pack": ["calibrate1.json", "calibrate2.json", "calibrate3.json", "calibrate4.json", "check.log",
                               "extras.json", "extras.log"]},
    "bracket-spread": {"plain": [], "pack": ["spread1.json", "spread2.json", "spread3.json", "spread4.json",
                                             "spread5.json", "spread-seq.json", "spread-ncu.csv", "spread.log"]},
    "previous-profiler-offset": {
        "plain": [],
        "pack": ["env.json", "extras.json", "extras.log", "fidelity.json", "fidelity.log", "stability.json",
                 "ncu.csv", "ncu-seq.json", "benchmark-compare.txt", "log_C.txt", "log_E.txt", "runs/run1.log",
                 "runs/run1.summary.md", "runs/run2.summary.md", "runs/run3.summary.md"],
    },
    "first-call": {"plain": [], "pack": ["extras.json", "fidelity.json", "fidelity.log", "gpu-tests.log",
                                         "gpu-tests-rerun-timeout.txt", "log_A.txt", "run1.log"]},
}
# Raw files that are summarized but neither kept nor packed.
DROPPED = {
    ".": [f"runs/run{i}.benchmark.json.gz" for i in range(1, 6)],
    "previous-profiler-offset": [f"runs/run{i}.state.json" for i in range(1, 4)]
    + [f"runs/run{i}.benchmark.json.gz" for i in range(1, 4)]
    + [f"histograms/hist-{c}_cuda.svg" for c in ("matmul", "row_softmax", "row_sum", "vector_add")],
    "first-call": ["run1.state.json"],
}
SMALL_US = 5.0     # below this ncu time the fidelity bound does not apply
MID_US = 20.0      # 5-20 us: +-10%; from 20 us: +-3%


# ----- helpers ---------------------------------------------------------------------------------
def load(path: Path) -> Any:
    return json.loads(path.read_text())


def r(x: float | None, nd: int = 3) -> float | None:
    return None if x is None else round(float(x), nd)


def span(values: Iterable[float | None], nd: int = 3) -> dict[str, Any]:
    xs = [float(v) for v in values if v is not None]
    if not xs:
        return {"n": 0}
    return {"min": r(min(xs), nd), "max": r(max(xs), nd), "median": r(statistics.median(xs), nd), "n": len(xs)}


def pct(x: float) -> float:
    return round(100 * x, 2)


def suite_timings(state_path: Path) -> dict[str, dict[str, Any]]:
    state = load(state_path)
    found = {}
    for case, data in sorted(state["cases"].items()):
        for branch, record in sorted(data["toolchains"].get("cuda", {}).get("branches", {}).items()):
            if record.get("timing"):
                found[f"{case}/{branch}"] = record["timing"]
            for size, sized in (record.get("sizes") or {}).items():  # ref.py bench_sizes: case@size/branch
                if sized.get("timing"):
                    found[f"{case}@{size}/{branch}"] = sized["timing"]
    return found


def pytest_seconds(log: Path) -> dict[str, Any]:
    """`=== runN` step headers of h200_evidence.sh's log -> the pytest summary line that follows (or the exit)."""
    found: dict[str, Any] = {}
    step = None
    for line in log.read_text(errors="replace").splitlines():
        m = re.match(r"=== (run\d+) ", line)
        if m:
            step = m.group(1)
            found[step] = {"pytest_s": None}
            continue
        if line.startswith("=== "):
            step = None
        if step is None:
            continue
        m = re.match(r"--- run\d+: exit (\d+)", line)
        if m:
            found[step]["exit"] = int(m.group(1))
        m = re.search(r"(\d+) passed.* in ([\d.]+)s", line)
        if m:
            found[step].update(pytest_s=float(m.group(2)), line=line.strip("= "))
    return found


def benchmark_vs_state(bench_gz: Path, state_path: Path) -> dict[str, Any]:
    """pytest-benchmark's stats median against state.json's timing.median_ms, per branch."""
    bench = json.loads(gzip.decompress(bench_gz.read_bytes()))
    state = suite_timings(state_path)
    rows = {}
    for b in bench["benchmarks"]:
        branch = b["param"] if b.get("param") else b["name"]
        case = b["group"].split("/")[0]
        label = f"{case}/{branch}"
        if label in state:
            s_ms, b_ms = state[label]["median_ms"], b["stats"]["median"] * 1e3
            rows[label] = {"state_ms": s_ms, "benchmark_ms": b_ms, "rel_diff": abs(b_ms / s_ms - 1),
                           "equal_6_digits": f"{s_ms:.6g}" == f"{b_ms:.6g}"}
    return {"branches": len(rows), "equal_to_6_significant_digits": sum(v["equal_6_digits"] for v in rows.values()),
            "max_rel_diff": max(v["rel_diff"] for v in rows.values()),
            "example": {k: {"state_us": r(v["state_ms"] * 1e3), "benchmark_us": r(v["benchmark_ms"] * 1e3)}
                        for k, v in rows.items() if k == "matmul/baseline"}}


def run_figures(states: list[Path], rotation: bool = True) -> dict[str, Any]:
    """What docs/gpu-timing.md's method section quotes from the per-branch timing records of suite runs."""
    timings = [t for p in states for t in suite_timings(p).values()]
    offsets = [t["event_offset"] for t in timings]
    tele = [t["telemetry"] for t in timings]
    out: dict[str, Any] = {
        "branch_timings": len(timings),
        "cold_median_us": span(t["median_ms"] * 1e3 for t in timings),
        "cold_rounds": span((t["rounds"] for t in timings), 0),
        "late_samples_discarded": span((t["late_samples_discarded"] for t in timings), 0),
        "launch_delay_us": span(t["launch_hiding"]["delay_us"] for t in timings),
        "host_call_us_median": span(t["launch_overhead"]["host_call_us_median"] for t in timings),
        "unhidden_minus_cold_us": span(t["launch_overhead"]["unhidden_minus_cold_us"] for t in timings),
        "measure_wall_s": span(t["measure_wall_s"] for t in timings),
        "event_offset_method": sorted({o.get("method", "profiler") for o in offsets}),
        "event_offset_applied": sum(bool(o.get("applied")) for o in offsets),
        "offset_us": span(o.get("offset_us") for o in offsets),
        "offset_samples": sorted({o.get("samples") for o in offsets}),
        "sm_clock_mhz": span((x for t in tele for x in (t["before"]["sm_clock_mhz"], t["after"]["sm_clock_mhz"],
                                                           t["sm_clock_mhz_during"]["min"],
                                                           t["sm_clock_mhz_during"]["max"])), 0),
        "mem_clock_mhz": span((x for t in tele for x in (t["before"]["mem_clock_mhz"], t["after"]["mem_clock_mhz"])), 0),
        "throttle_reasons": sorted({x for t in tele for p in ("before", "after") for x in t[p]["throttle_reasons"]}),
    }
    for key in ("empty_pair_us", "one_kernel_us", "per_kernel_us"):
        if any(key in o for o in offsets):
            out[key] = span(o.get(key) for o in offsets)
    if not rotation:
        return out
    first = suite_timings(states[0])
    rotated = {k: t for k, t in first.items() if t.get("hot_rotated")}
    out["hot_rotated_run1"] = {k: {"working_set_bytes": t["rotation"]["working_set_bytes"], "sets": t["rotation"]["sets"],
                                   "cold_us": r(t["median_ms"] * 1e3), "hot_us": r(t["hot"]["median_ms"] * 1e3),
                                   "hot_rotated_us": r(t["hot_rotated"]["median_ms"] * 1e3)}
                               for k, t in rotated.items()}
    return out


def fidelity_figures(path: Path) -> dict[str, Any]:
    rows = [x for x in load(path)["rows"] if x.get("ncu_us") is not None]

    def band(lo: float, hi: float, kind: str | None = None) -> list[dict[str, Any]]:
        return [x for x in rows if lo <= x["ncu_us"] < hi and (kind is None or x["kind"] == kind)]

    def rel(sel: list[dict[str, Any]], key: str) -> dict[str, Any]:
        return {"min_pct": pct(min(x[key] for x in sel)), "max_pct": pct(max(x[key] for x in sel)), "n": len(sel)} if sel else {}

    def raw_vs_ncu(sel: list[dict[str, Any]]) -> dict[str, Any]:
        v = [x["raw_event_us"] / x["ncu_us"] - 1 for x in sel if x.get("raw_event_us") is not None]
        return {"min_pct": pct(min(v)), "max_pct": pct(max(v)), "n": len(v)} if v else {}

    suite = [x for x in rows if x["kind"] == "suite"]
    out = {
        "suite_branches": len(suite),
        "suite_ncu_us": span((x["ncu_us"] for x in suite), 2) if suite else None,
        "suite_harness_vs_ncu": rel(suite, "harness_vs_ncu"),
        "from_20us_harness_vs_ncu": rel(band(MID_US, 1e12), "harness_vs_ncu"),
        "5_to_20us_harness_vs_ncu": rel(band(SMALL_US, MID_US), "harness_vs_ncu"),
        "5_to_20us_points": [x["target"] for x in band(SMALL_US, MID_US)],
        "below_5us_harness_vs_ncu": rel(band(0, SMALL_US), "harness_vs_ncu"),
        "below_5us_raw_events_vs_ncu": raw_vs_ncu(band(0, SMALL_US)),
        "below_5us_original_vs_ncu": rel(band(0, SMALL_US), "seed_vs_ncu"),
        "original_vs_ncu_all": rel(rows, "seed_vs_ncu"),
        "all_within_limit": all(x["pass"] is not False for x in rows),
    }
    at_1m = [x for x in rows if x["target"].endswith("@N=1048576")]
    out["at_1M_original_vs_ncu"] = rel(at_1m, "seed_vs_ncu")
    small = band(0, 1e12, "sweep")
    out["sweep_below_1M_original_vs_ncu"] = rel([x for x in small if x["target"].endswith(("@N=65536", "@N=262144"))],
                                                "seed_vs_ncu")
    streaming = [x for x in rows if x["target"].startswith("vector_add/") and
                 (x["kind"] == "suite" or x["target"].endswith("@N=16777216"))]
    out["vector_add_beyond_L2_original_vs_ncu"] = rel(streaming, "seed_vs_ncu")
    offs = [x["offset_us"] for x in rows if x.get("offset_us") is not None]
    out["offset_us"] = span(offs)
    for x in rows:
        if x["target"] in ("vector_add/float4@N=16777216", "vector_add/baseline@N=1048576", "matmul/regtile_4x4"):
            out.setdefault("points", {})[x["target"]] = {
                "ncu_us": r(x["ncu_us"], 2), "harness_us": r(x["harness_us"], 2), "hot_us": r(x["hot_us"], 2),
                "original_us": r(x["seed_method_us"], 2), "hot_vs_cold_pct": pct(x["hot_us"] / x["harness_us"] - 1)}
    return out


def flush_and_near_limit(extras_path: Path) -> dict[str, Any]:
    extras = load(extras_path)
    out: dict[str, Any] = {}
    fm = extras.get("flush_modes", {}).get("vector_add/float4@N=16777216")
    if fm:
        out["flush_modes_float4_16M_us"] = {m: r(v["median_ms"] * 1e3, 2) for m, v in fm.items()}
    small = {k: v for k, v in extras.get("sweep", {}).items() if k.endswith("@N=65536")}
    out["unhidden_minus_cold_us_at_64K"] = {k: r(v["launch_overhead"]["unhidden_minus_cold_us"], 2)
                                            for k, v in small.items()}
    nl = extras.get("near_limit")
    if nl:
        out["near_limit"] = {"champion": nl["champion"], "N": nl["N"], "kernel_median_ms": r(nl["kernel_median_ms"], 4),
                             "kernel_GBps": r(nl["kernel_GBps"], 0), "copy_median_ms": r(nl["copy_median_ms"], 4),
                             "copy_GBps": r(nl["copy_GBps"], 0), "ratio": r(nl["ratio"], 3), "pass": nl["pass"],
                             "method": nl["method"]}
    return out


def ncu_from(folder: Path, csv_name: str, seq_name: str) -> dict[str, dict[str, Any]]:
    seq = load(folder / seq_name)
    return ncu_per_target(parse_ncu_csv((folder / csv_name).read_text(errors="replace")), seq["order"], seq["calls"])


def histogram(values: list[float], width: float = 0.1) -> dict[str, int]:
    counts = Counter(round(round(v / width) * width, 2) for v in values)
    return {f"{k:.1f}": counts[k] for k in sorted(counts)}


# ----- per set --------------------------------------------------------------------------------
def main_set(raw: Path) -> dict[str, Any]:
    states = [raw / f"runs/run{i}.state.json" for i in range(1, 6)]
    logs = {}
    for name in ("log_F.txt", "log_G.txt", "log_H.txt"):
        for run, info in pytest_seconds(raw / name).items():
            logs[run] = {"log": name, **info}
    tests = (raw / "tests.log").read_text().strip().splitlines()
    return {
        "what": "suite runs 1-5 (calibrated bracket offset, 60 samples per kernel count), run 1's ncu fidelity, "
                "extras and near-limit check, the GPU-gated tests",
        "runs_1_to_5": run_figures(states),
        "pytest_benchmark_vs_state": {f"run{i}": benchmark_vs_state(raw / f"runs/run{i}.benchmark.json.gz", states[i - 1])
                                      for i in range(1, 6)},
        "suite_runs_pytest": logs,
        "fidelity_run1": fidelity_figures(raw / "fidelity.json"),
        "extras_run1": flush_and_near_limit(raw / "extras.json"),
        "stability": stability_figures(raw / "stability.json"),
        "gpu_tests": {"log": "tests.log", "result": tests[-1], "skipped": [x for x in tests if x.startswith("SKIPPED")]},
    }


def stability_figures(path: Path) -> dict[str, Any]:
    rows = load(path)["rows"]
    worst = max(rows, key=lambda x: x["max_over_min"])
    return {"runs": len(load(path)["runs"]), "branches": len(rows), "all_pass": all(x["pass"] for x in rows),
            "min_median_us": r(min(min(x["medians_ms"]) for x in rows) * 1e3, 2),
            "worst": {"target": worst["target"], "max_over_min": r(worst["max_over_min"], 4)},
            "max_over_min_of_the_others": r(max(x["max_over_min"] for x in rows if x is not worst), 4)}


def probe_set(folder: Path) -> dict[str, Any]:
    probe = load(folder / "probe.json")
    ncu = ncu_from(folder, "probe-ncu.csv", "probe-seq.json")
    targets = {}
    for label, v in probe.items():
        row: dict[str, Any] = {"raw_event_us": r(v["raw_event_median_us"]), "n": v["n"]}
        prof = v["profiler"]
        if prof.get("applied"):
            row.update(cupti_device_us=r(prof["device_median_us"]), profiler_offset_us=r(prof["offset_us"]))
        if label in ncu:
            n = ncu[label]["ncu_median_us"]
            row.update(ncu_us=r(n), raw_minus_ncu_us=r(v["raw_event_median_us"] - n),
                       raw_vs_ncu_pct=pct(v["raw_event_median_us"] / n - 1))
            if "cupti_device_us" in row:
                row["cupti_minus_ncu_us"] = r(prof["device_median_us"] - n)
        targets[label] = row
    with_ncu = [x for x in targets.values() if "ncu_us" in x]
    five = [x for k, x in targets.items() if k.endswith("@N=1048576")]
    return {
        "what": "raw event pairs (no correction) and CUPTI's kernel time against ncu, before the calibrated method",
        "targets": targets,
        "raw_minus_ncu_us": span(x["raw_minus_ncu_us"] for x in with_ncu),
        "cupti_minus_ncu_us": span(x["cupti_minus_ncu_us"] for x in with_ncu if "cupti_minus_ncu_us" in x),
        "cupti_minus_ncu_between_-1.3_and_-0.7_us": sorted(k for k, x in targets.items()
                                                            if -1.3 <= x.get("cupti_minus_ncu_us", 99) <= -0.7),
        "cupti_minus_ncu_outside_that_us": {k: x["cupti_minus_ncu_us"] for k, x in targets.items()
                                            if "cupti_minus_ncu_us" in x and not -1.3 <= x["cupti_minus_ncu_us"] <= -0.7},
        "profiler_offset_us": span(x.get("profiler_offset_us") for x in targets.values()),
        "raw_vs_ncu_pct_at_1M": {"min": min(x["raw_vs_ncu_pct"] for x in five), "max": max(x["raw_vs_ncu_pct"] for x in five)},
    }


def check_set(folder: Path) -> dict[str, Any]:
    reps = [rep for i in range(1, 5) for rep in load(folder / f"calibrate{i}.json")]
    offsets = [rep["offset"] for rep in reps]
    one = [t for rep in reps for t in rep["raw_us"]["1"]]
    extras = load(folder / "extras.json")
    sweep_offsets = sorted({v["event_offset"]["offset_us"] for v in extras["sweep"].values()})
    return {
        "what": "4 processes x 3 fresh calibrations (200 samples per kernel count), then run 1's suite and the size "
                "sweep against a new ncu run",
        "calibrations": len(offsets),
        "offset_us": span(o["offset_us"] for o in offsets),
        "empty_pair_us": span(o["empty_pair_us"] for o in offsets),
        "one_kernel_us": span(o["one_kernel_us"] for o in offsets),
        "per_kernel_us": span(o["per_kernel_us"] for o in offsets),
        "samples": sorted({o["samples"] for o in offsets}),
        "one_kernel_raw_samples": {"n": len(one), "histogram_0.1us": histogram(one),
                                   "share_below_3.2us_per_calibration": [
                                       round(sum(t < 3.2 for t in rep["raw_us"]["1"]) / len(rep["raw_us"]["1"]), 2)
                                       for rep in reps]},
        "extras_offset_us": sweep_offsets,
        "fidelity": fidelity_figures(folder / "fidelity.json"),
        "extras": flush_and_near_limit(folder / "extras.json"),
    }


def spread_set(folder: Path) -> dict[str, Any]:
    ncu = ncu_from(folder, "spread-ncu.csv", "spread-seq.json")
    procs = [load(folder / f"spread{i}.json") for i in range(1, 6)]
    labels = list(procs[0]["harness"])
    per_target = {}
    for label in labels:
        n = ncu[label]["ncu_median_us"]
        per_target[label] = {"ncu_us": r(n, 2),
                             "harness_vs_ncu_pct": [pct(p["harness"][label]["median_us"] / n - 1) for p in procs]}
    corr = {}
    for label in labels:
        k = [w["kernel_raw_us"] for p in procs for w in p["windows"].get(label, [])]
        t = [w["tiny_raw_us"] for p in procs for w in p["windows"].get(label, [])]
        corr[label] = {"windows": len(k), "pearson_r": r(statistics.correlation(k, t), 2) if len(k) > 2 else None}
    allp = [v for x in per_target.values() for v in x["harness_vs_ncu_pct"]]
    return {
        "what": "5 fresh processes, each timing the four 5-20 us points with its own calibration; one ncu run",
        "targets": per_target,
        "harness_vs_ncu_pct": {"min": min(allp), "max": max(allp), "n": len(allp)},
        "offset_us": span(p["harness"][labels[0]]["offset_us"] for p in procs),
        "fill_kernel_ncu_us": r(ncu["1-element fill kernel"]["ncu_median_us"], 2) if "1-element fill kernel" in ncu else None,
        "same_window_kernel_vs_tiny_raw": corr,
    }


def profiler_set(folder: Path) -> dict[str, Any]:
    states = [folder / f"runs/run{i}.state.json" for i in range(1, 4)]
    logs = {}
    for name in ("log_C.txt", "log_E.txt"):
        for run, info in pytest_seconds(folder / name).items():
            logs.setdefault(run, []).append({"log": name, **info})
    seconds = [i["pytest_s"] for v in logs.values() for i in v if i.get("pytest_s")]
    return {
        "what": "the previous default (--dcuopt-event-offset=profiler: CUPTI kernel records via torch.profiler), "
                "3 suite runs, fidelity of run 1, extras",
        "runs_1_to_3": run_figures(states),
        "run1": run_figures(states[:1], rotation=False),
        "pytest_benchmark_vs_state": {
            f"run{i}": benchmark_vs_state(folder / f"runs/run{i}.benchmark.json.gz", states[i - 1]) for i in range(1, 4)},
        "suite_runs_pytest": logs,
        "suite_runs_pytest_s": {"min": min(seconds), "max": max(seconds), "n": len(seconds)},
        "fidelity_run1": fidelity_figures(folder / "fidelity.json"),
        "extras_run1": flush_and_near_limit(folder / "extras.json"),
        "stability": stability_figures(folder / "stability.json"),
    }


def first_call_set(folder: Path) -> dict[str, Any]:
    errors = sorted({m.group(0) for m in re.finditer(r"cudaError\w+ \(\d+\): [^,.(]+(?:, right after calling solve\(\))?",
                                                     (folder / "gpu-tests.log").read_text(errors="replace"))})
    tail = [x for x in (folder / "gpu-tests.log").read_text().splitlines() if re.search(r"\d+ (passed|failed)", x)]
    timings = suite_timings(folder / "run1.state.json")
    return {
        "what": "the first GPU run: raw event times (no bracket correction), the GPU-gated tests, named CUDA errors",
        "run1_branches": len(timings),
        "run1_event_offset_recorded": sum("event_offset" in t for t in timings.values()),
        "cuda_errors_seen": errors,
        "gpu_tests_result": tail[-1] if tail else None,
        "fidelity_run1": fidelity_figures(folder / "fidelity.json"),
    }


def across_sets(raw: Path, out: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Figures docs/gpu-timing.md states over several sets."""
    main, check, spread = out["."], out["bracket-check"], out["bracket-spread"]
    runs1 = suite_timings(raw / "runs/run1.state.json")
    extras1 = load(raw / "extras.json")
    cal200 = [rep["offset"]["offset_us"] for i in range(1, 5) for rep in load(raw / f"bracket-check/calibrate{i}.json")]
    cal200 += check["extras_offset_us"] + [load(raw / f"bracket-spread/spread{i}.json")["harness"][
        "vector_add/baseline@N=1048576"]["offset_us"] for i in range(1, 6)]
    cal60 = [t["event_offset"]["offset_us"] for i in range(1, 6) for t in suite_timings(raw / f"runs/run{i}.state.json").values()]
    cal60 += sorted({v["event_offset"]["offset_us"] for v in extras1["sweep"].values()})
    fid = [load(raw / "fidelity.json")["rows"], load(raw / "bracket-check/fidelity.json")["rows"]]
    below = [x for rows in fid for x in rows if x.get("ncu_us") is not None and x["ncu_us"] < SMALL_US]
    mid = [x for rows in fid for x in rows if x.get("ncu_us") is not None and SMALL_US <= x["ncu_us"] < MID_US]
    at_1m = [x for rows in fid for x in rows if x["target"].endswith("@N=1048576")]
    ncu_1m = [x["ncu_us"] for rows in fid for x in rows if x["target"] == "vector_add/baseline@N=1048576"]
    ncu_1m.append(spread["targets"]["vector_add/baseline@N=1048576"]["ncu_us"])
    half = (max(cal200) - min(cal200)) / 2
    return {
        "calibrated_offsets_200_samples": {"sets": "bracket-check (12 calibrations + its extras process), "
                                                   "bracket-spread (5 processes)", **span(cal200)},
        "calibrated_offsets_60_samples": {"sets": "runs 1-5 (one per branch worker) + run 1's extras process",
                                          **span(cal60)},
        "offset_half_range_us_200_samples": r(half),
        "offset_half_range_vs_ncu_at_1M_pct": {k: pct(half / v["ncu_us"]) for k, v in spread["targets"].items()
                                               if k.endswith("@N=1048576")},
        "ncu_baseline_1M_us_in_three_ncu_runs": [r(v, 2) for v in ncu_1m],
        "below_5us_two_runs": {
            "harness_vs_ncu_pct": [pct(min(x["harness_vs_ncu"] for x in below)), pct(max(x["harness_vs_ncu"] for x in below))],
            "raw_events_vs_ncu_pct": [pct(min(x["raw_event_us"] / x["ncu_us"] - 1 for x in below)),
                                      pct(max(x["raw_event_us"] / x["ncu_us"] - 1 for x in below))],
            "original_vs_ncu_pct": [pct(min(x["seed_vs_ncu"] for x in below)), pct(max(x["seed_vs_ncu"] for x in below))],
            "n": len(below)},
        "5_to_20us_two_runs_harness_vs_ncu_pct": [pct(min(x["harness_vs_ncu"] for x in mid)),
                                                  pct(max(x["harness_vs_ncu"] for x in mid)), len(mid)],
        "at_1M_two_runs_original_vs_ncu_pct": [pct(min(x["seed_vs_ncu"] for x in at_1m)),
                                               pct(max(x["seed_vs_ncu"] for x in at_1m))],
        "run1_branches": len(runs1),
    }


def pack(raw: Path, out: Path) -> dict[str, int]:
    sizes = {}
    for name, spec in SETS.items():
        members = [(raw / name / m, (Path(name) / m).as_posix().removeprefix("./")) for m in spec["pack"]]
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for src, arcname in sorted(members, key=lambda x: x[1]):
                info = tarfile.TarInfo(arcname)
                data = src.read_bytes()
                info.size, info.mtime, info.mode = len(data), 0, 0o644
                tar.addfile(info, io.BytesIO(data))
        target = out / name / "raw.tar.xz"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(lzma.compress(buf.getvalue(), preset=9 | lzma.PRESET_EXTREME))
        sizes[str(target)] = target.stat().st_size
        for m in spec["plain"]:
            (out / name / m).write_bytes((raw / name / m).read_bytes())
    return sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--raw", type=Path, required=True, help="the unpacked evidence folder (docs/evidence/h200 layout)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--pack", action="store_true", help="also write <set>/raw.tar.xz and copy the plain files")
    parser.add_argument("--source", default="", help="where --raw came from (recorded in every summary)")
    args = parser.parse_args()
    raw = args.raw
    made_by = ("python3 tools/device/evidence_summary.py --raw <raw> --out docs/evidence/h200"
               + (" --pack" if args.pack else "") + (f"  (raw = {args.source})" if args.source else ""))
    out = {".": main_set(raw), "bracket-probe": probe_set(raw / "bracket-probe"),
           "bracket-check": check_set(raw / "bracket-check"), "bracket-spread": spread_set(raw / "bracket-spread"),
           "previous-profiler-offset": profiler_set(raw / "previous-profiler-offset"),
           "first-call": first_call_set(raw / "first-call")}
    out["."]["across_sets"] = across_sets(raw, out)
    if args.pack:
        for path, size in pack(raw, args.out).items():
            print(f"{path}: {size} bytes")
    for name, summary in out.items():
        doc = {"made_by": made_by, "raw_files_packed": [f"{name}/{m}".removeprefix("./") for m in SETS[name]["pack"]],
               "raw_files_dropped": [f"{name}/{m}".removeprefix("./") for m in DROPPED.get(name, [])], **summary}
        target = args.out / name / "summary.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
        print(f"{target}: {target.stat().st_size} bytes")


if __name__ == "__main__":
    main()
