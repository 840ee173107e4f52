"""Summary of tools/device/keeps_up_check.sh: the harness's cost per branch, and where the reference ran.

    python3 tools/device/keeps_up_check.py --work DIR --out summary.json --md summary.md

For every run folder under DIR with a state.json: per benchmark test (branch, and size when it has one) the
harness's time beyond the samples (`timing.harness_overhead_s`) with its phases (`timing.harness_phases_s`), the
boundary check made before timing when the correctness test did not run in the process (`pre_timing_check_s`) and
the JUnit time of the test; per correctness test its JUnit time, verdict and where its reference ran
(`observations.reference_device`).
"""
from __future__ import annotations

import argparse
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

TEST = re.compile(r"test_(?P<kind>benchmark|correctness)_(?P<toolchain>\w+?)\[(?P<branch>[^\]]+)\]")


def junit(path: Path) -> dict[str, dict[str, Any]]:
    """Test name -> {seconds, outcome}."""
    found: dict[str, dict[str, Any]] = {}
    if not path.is_file():
        return found
    for case in ET.parse(path).getroot().iter("testcase"):
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = child.tag
        found[case.get("name", "")] = {"seconds": float(case.get("time", 0.0)), "outcome": outcome}
    return found


def run_summary(folder: Path) -> dict[str, Any]:
    state = json.loads((folder / "state.json").read_text())
    tests = junit(folder.with_suffix(".xml"))
    rows: list[dict[str, Any]] = []
    for case_name, case in state.get("cases", {}).items():
        for toolchain, entry in case.get("toolchains", {}).items():
            for branch, record in entry.get("branches", {}).items():
                points = [("", record)] + [(size, sized) for size, sized in (record.get("sizes") or {}).items()]
                for size, point in points:
                    timing = point.get("timing") or {}
                    if not timing:
                        continue
                    name = f"test_benchmark_{toolchain}[{branch}{'-' + size if size else ''}]"
                    rows.append({"case": case_name, "branch": branch, "size": size or None, "kind": "benchmark",
                                 "test_s": tests.get(name, {}).get("seconds"),
                                 "median_ms": timing.get("median_ms"), "rounds": timing.get("rounds"),
                                 "measure_wall_s": timing.get("measure_wall_s"),
                                 "harness_overhead_s": timing.get("harness_overhead_s"),
                                 "phases_s": timing.get("harness_phases_s"),
                                 "pre_timing_check_s": timing.get("pre_timing_check_s"),
                                 "worker_start": (point.get("device") or {}).get("worker_start")})
                name = f"test_correctness_{toolchain}[{branch}]"
                if name in tests:
                    rows.append({"case": case_name, "branch": branch, "kind": "correctness",
                                 "test_s": tests[name]["seconds"], "outcome": tests[name]["outcome"],
                                 "correct": record.get("correct"), "examples": record.get("examples"),
                                 "reference_device": (record.get("observations") or {}).get("reference_device"),
                                 "failure": ((record.get("failure") or {}).get("message") or "")[:400] or None})
    return {"run": folder.name, "exit_status": state.get("exit_status"), "interrupted": state.get("interrupted"),
            "rows": rows}


def markdown(runs: list[dict[str, Any]], gpu: str) -> str:
    lines = ["# Harness cost per branch and the reference's device (tools/device/keeps_up_check.sh)", "",
             "```", gpu.strip(), "```", ""]
    for run in runs:
        lines += [f"## {run['run']} (exit {run['exit_status']}{', interrupted' if run['interrupted'] else ''})", ""]
        bench = [r for r in run["rows"] if r["kind"] == "benchmark"]
        if bench:
            lines += ["| branch | test s | timing loop s | harness s | phases s | pre-timing check s | worker start | "
                      "median ms |", "|---|---|---|---|---|---|---|---|"]
            for r in bench:
                phases = ", ".join(f"{k} {v:.2f}" for k, v in (r["phases_s"] or {}).items())
                label = r["branch"] + (f" [{r['size']}]" if r["size"] else "")
                start = r.get("worker_start") or {}
                started = f"{'spare' if start.get('spare') else 'cold'} {start.get('seconds')} s" if start else "-"
                lines.append(f"| {label} | {r['test_s']} | {r['measure_wall_s']} | {r['harness_overhead_s']} | "
                             f"{phases} | {r['pre_timing_check_s']} | {started} | {r['median_ms']} |")
            lines.append("")
        checks = [r for r in run["rows"] if r["kind"] == "correctness"]
        if checks:
            lines += ["| branch | test s | outcome | correct | examples | reference ran on |",
                      "|---|---|---|---|---|---|"]
            for r in checks:
                where = r["reference_device"] or {}
                shown = (f"{where.get('device')}: {where.get('why')} ({where.get('seconds')} s)" if where
                         else "not recorded (small, or computed for another branch)")
                lines.append(f"| {r['branch']} | {r['test_s']} | {r['outcome']} | {r['correct']} | {r['examples']} | "
                             f"{shown} |")
            for r in checks:
                if r["failure"]:
                    lines.append(f"\n{r['branch']} failure: `{r['failure'][:300]}`")
            lines.append("")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--md", type=Path, required=True)
    args = parser.parse_args()
    runs = [run_summary(folder) for folder in sorted(args.work.iterdir())
            if folder.is_dir() and not folder.is_symlink() and (folder / "state.json").is_file()]
    gpu = (args.work / "gpu.txt").read_text() if (args.work / "gpu.txt").is_file() else ""
    args.out.write_text(json.dumps({"gpu": gpu, "runs": runs}, indent=1) + "\n")
    args.md.write_text(markdown(runs, gpu))
    print(f"{len(runs)} runs summarized into {args.md}")


if __name__ == "__main__":
    main()
