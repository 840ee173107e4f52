"""Per-branch harness cost of a pytest run, from its JUnit XML and state.json ("harness time per branch
beyond the kernel's own samples").

    python3 tools/device/overhead_summary.py --junit run.xml --state RUN/state.json --md overhead.md --json overhead.json

Per test: its JUnit time. For a benchmark test, the time the branch's samples took (`rounds x median`, what a
perfect harness would spend), the time inside the worker's timing loop (`timing.measure_wall_s`: samples plus
warm-up, detection, calibrations) and the rest (`test time - samples`): the harness's cost around the kernel's own
samples (reference, checks, transfers, worker start, IPC, records).
"""
from __future__ import annotations

import argparse
import json
import re
import statistics
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

TEST_ID = re.compile(r"test_(?P<kind>benchmark|correctness)_(?P<toolchain>\w+?)\[(?P<branch>[^\]]+)\]")


def junit_times(path: Path) -> dict[tuple[str, str], float]:
    """(case dir name, test name with params) -> seconds."""
    found: dict[tuple[str, str], float] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        classname = case.get("classname", "")
        found[(classname.split(".")[-2] if "." in classname else classname, case.get("name", ""))] = float(
            case.get("time", 0.0))
    return found


def timings(state: dict[str, Any]) -> dict[tuple[str, str, str, str], dict[str, Any]]:
    """(case, toolchain, branch, size or "") -> timing record."""
    found: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    for case_name, case in state.get("cases", {}).items():
        for toolchain, entry in case.get("toolchains", {}).items():
            for branch, record in entry.get("branches", {}).items():
                if record.get("timing"):
                    found[(case_name, toolchain, branch, "")] = record["timing"]
                for size, sized in (record.get("sizes") or {}).items():
                    if isinstance(sized, dict) and sized.get("timing"):
                        found[(case_name, toolchain, branch, size)] = sized["timing"]
    return found


def rows(junit: dict[tuple[str, str], float], state: dict[str, Any]) -> list[dict[str, Any]]:
    by_branch = timings(state)
    out: list[dict[str, Any]] = []
    for (case, name), seconds in sorted(junit.items()):
        match = TEST_ID.match(name)
        if not match:
            continue
        branch, size = match["branch"], ""
        row: dict[str, Any] = {"case": case, "test": name, "kind": match["kind"], "test_s": round(seconds, 3)}
        timing = by_branch.get((case, match["toolchain"], branch, size))
        if timing is None and "-" in branch:  # a per-size id: <branch>-<size>
            base, _, size = branch.rpartition("-")
            timing = by_branch.get((case, match["toolchain"], base, size))
        if match["kind"] == "benchmark" and timing:
            samples_s = timing.get("rounds", 0) * timing.get("median_ms", 0.0) / 1e3
            row.update(samples_s=round(samples_s, 3), measure_wall_s=timing.get("measure_wall_s"),
                       overhead_s=round(seconds - samples_s, 3), method=timing.get("method"),
                       median_ms=timing.get("median_ms"), rounds=timing.get("rounds"))
        out.append(row)
    return out


def render(found: list[dict[str, Any]]) -> str:
    bench = [r for r in found if "overhead_s" in r]
    lines = ["| test | test s | samples s (rounds x median) | timing loop s | beyond the samples s |",
             "|---|---|---|---|---|"]
    for r in bench:
        lines.append(f"| {r['case']}/{r['test']} | {r['test_s']} | {r['samples_s']} | {r['measure_wall_s']} | "
                     f"{r['overhead_s']} |")
    if bench:
        over = [r["overhead_s"] for r in bench]
        lines.append("")
        lines.append(f"benchmark tests: {len(bench)}; beyond the samples: median {statistics.median(over):.2f} s, "
                     f"max {max(over):.2f} s; correctness tests: "
                     f"{sum(r['test_s'] for r in found if r['kind'] == 'correctness'):.1f} s in all")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--junit", type=Path, required=True)
    parser.add_argument("--state", type=Path, required=True)
    parser.add_argument("--md", type=Path, required=True)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    found = rows(junit_times(args.junit), json.loads(args.state.read_text()))
    args.md.write_text(render(found))
    if args.json:
        args.json.write_text(json.dumps(found, indent=1))
    print(render(found))


if __name__ == "__main__":
    main()
