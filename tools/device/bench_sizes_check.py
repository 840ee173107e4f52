"""Summary of tools/device/bench_sizes_check.sh: one case's benchmark sizes (ref.py `bench_sizes`) from the state.json
files of its runs, per run label (cold, hot, ...): each size's dims and champion, and per branch and size the median,
GB/s, A/B speedup, timing quality and the checked timed calls.

    python3 tools/device/bench_sizes_check.py --case vector_add --toolchain cuda \
        --state cold=/tmp/run/state.json --state hot=/tmp/hot/state.json --out summary.json --md summary.md
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from pytest_dcuopt.report.state import find_case  # cases are keyed by their path relative to the rootdir


def size_table(state: dict[str, Any], case: str, toolchain: str) -> dict[str, Any]:
    """{size: {dims, champion, champion_speedup, branches: {branch: figures}}} of one case and toolchain."""
    result = find_case(state, case)["toolchains"][toolchain]
    found: dict[str, Any] = {}
    for size, info in (result.get("sizes") or {}).items():
        branches = {}
        for name, branch in result["branches"].items():
            entry = (branch.get("sizes") or {}).get(size)
            if entry is None:
                continue
            timing = entry.get("timing") or {}
            branches[name] = {
                "correct": branch.get("correct"), "median_ms": timing.get("median_ms"),
                "gbps": (entry.get("throughput") or {}).get("gbps"), "speedup": entry.get("speedup_vs_baseline"),
                "beats_baseline": entry.get("beats_baseline"), "quality": timing.get("quality"),
                "mode": timing.get("mode"), "timed_calls_checked": timing.get("timed_calls_checked"),
                "skipped": entry.get("skipped"), "error": (entry.get("error") or {}).get("kind")}
        found[size] = {"dims": info["dims"], "champion": info["champion"],
                       "champion_speedup": info["champion_speedup"], "branches": branches}
    return found


def summarize(states: dict[str, dict[str, Any]], case: str, toolchain: str) -> dict[str, Any]:
    runs = {}
    for label, state in states.items():
        try:
            runs[label] = size_table(state, case, toolchain)
        except KeyError as exc:  # the run did not get as far as this case and toolchain
            runs[label] = {"missing": f"no {case}/{toolchain} in this state ({exc})"}
    return {"case": case, "toolchain": toolchain, "runs": runs}


def markdown(summary: dict[str, Any]) -> str:
    out = [f"# Benchmark sizes: {summary['case']} ({summary['toolchain']})", ""]
    for label, sizes in summary["runs"].items():
        out += [f"## {label}", ""]
        if "missing" in sizes:
            out += [sizes["missing"], ""]
            continue
        for size, info in sizes.items():
            dims = ", ".join(f"{k}={v}" for k, v in info["dims"].items())
            speedup = f" ({info['champion_speedup']:.2f}x)" if info["champion_speedup"] else ""
            out += [f"### {size} ({dims}): champion {info['champion']}{speedup}", "",
                    "| branch | correct | median ms | GB/s | speedup | quality | timed calls checked | note |",
                    "|---|---|---|---|---|---|---|---|"]
            for name, row in info["branches"].items():
                note = row["error"] or row["skipped"] or ""
                out.append(f"| {name} | {row['correct']} | {_num(row['median_ms'])} | {_num(row['gbps'])} | "
                           f"{_num(row['speedup'])} | {row['quality'] or '-'} | {row['timed_calls_checked']} | "
                           f"{note} |")
            out.append("")
    return "\n".join(out)


def _num(value: Any) -> str:
    return "-" if value is None else f"{value:.4g}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", required=True)
    parser.add_argument("--toolchain", required=True)
    parser.add_argument("--state", action="append", default=[], help="LABEL=path/to/state.json (repeatable)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--md", type=Path, required=True)
    args = parser.parse_args()
    states = {}
    for item in args.state:
        label, _, path = item.partition("=")
        if Path(path).is_file():
            states[label] = json.loads(Path(path).read_text())
    summary = summarize(states, args.case, args.toolchain)
    args.out.write_text(json.dumps(summary, indent=1))
    args.md.write_text(markdown(summary))
    print(markdown(summary))


if __name__ == "__main__":
    main()
